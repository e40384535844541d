import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Keyring } from '../crypto/keyring.ts';
import { InputInvalidError } from '../errors.ts';

/** Bytes of HMAC-SHA256 kept in a cursor: forging one is as hard as guessing 128 random bits. */
const CURSOR_MAC_BYTES = 16;

function mac(keyring: Keyring, signed: { keyId: string; scope: string; payload: string }): Buffer {
  return createHmac('sha256', keyring.subkey('cursor', signed.keyId, 'a cursor'))
    .update(`${signed.scope}.${signed.payload}`)
    .digest()
    .subarray(0, CURSOR_MAC_BYTES);
}

/**
 * A page position as `payload.keyId.mac`: the position's fields, and a MAC under a data key
 * and `scope` (a tenant and a listing, so a cursor of one listing or tenant is refused by
 * another). Only cursors this API issued decode; anything else is BAD_USER_INPUT before SQL.
 */
export function encodeSignedCursor(keyring: Keyring, scope: string, fields: string[]): string {
  const payload = Buffer.from(JSON.stringify(fields)).toString('base64url');
  const keyId = keyring.primaryId;
  return `${payload}.${keyId}.${mac(keyring, { keyId, scope, payload }).toString('base64url')}`;
}

export function decodeSignedCursor(keyring: Keyring, scope: string, cursor: string): string[] {
  const refuse = () => new InputInvalidError('after', 'after is not a cursor this API returned');
  const [payload, keyId, given, ...rest] = cursor.split('.');
  if (payload === undefined || keyId === undefined || given === undefined || rest.length > 0)
    throw refuse();
  if (!keyring.ids.includes(keyId)) throw refuse();
  const expected = mac(keyring, { keyId, scope, payload });
  const givenBytes = Buffer.from(given, 'base64url');
  if (
    givenBytes.length !== expected.length ||
    givenBytes.toString('base64url') !== given ||
    !timingSafeEqual(givenBytes, expected)
  )
    throw refuse();
  let fields: unknown;
  try {
    fields = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw refuse(); // authentic, so ours: only a data key used for something else gets here
  }
  if (!Array.isArray(fields) || !fields.every((f) => typeof f === 'string')) throw refuse();
  return fields;
}
