import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Keyring } from '../kernel/crypto/keyring.ts';
import { InputInvalidError } from '../kernel/errors.ts';

/**
 * A page position: the last payment's creation time (microseconds since the epoch) and id. Ties
 * on the time are broken by the id, so a page boundary never repeats or skips a payment.
 */
export interface CursorPosition {
  createdUs: string;
  id: string;
}

/** Bytes of HMAC-SHA256 kept in a cursor: forging one is as hard as guessing 128 random bits. */
const CURSOR_MAC_BYTES = 16;
/**
 * Microseconds since the epoch, at most 16 digits (until about the year 2286). A cursor's time is
 * multiplied into an interval and added to a timestamp: a larger one would overflow there, and
 * PostgreSQL's out-of-range error would surface as a 500.
 */
const CURSOR_TIME_PATTERN = /^(0|[1-9]\d{0,15})$/;
/** Ids come back from PostgreSQL in lower case, so an issued cursor never has another spelling. */
const CURSOR_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function mac(
  keyring: Keyring,
  signed: { keyId: string; tenantId: string; payload: string },
): Buffer {
  return createHmac('sha256', keyring.subkey('cursor', signed.keyId, 'a cursor'))
    .update(`${signed.tenantId}.${signed.payload}`)
    .digest()
    .subarray(0, CURSOR_MAC_BYTES);
}

/**
 * `payload.keyId.mac`: the position, and a MAC under the tenant and a data key. Only cursors this
 * API issued to this tenant decode; one from another tenant, or edited by hand, is refused
 * before it reaches SQL.
 */
export function encodeCursor(keyring: Keyring, tenantId: string, at: CursorPosition): string {
  const payload = Buffer.from(JSON.stringify([at.createdUs, at.id])).toString('base64url');
  const keyId = keyring.primaryId;
  return `${payload}.${keyId}.${mac(keyring, { keyId, tenantId, payload }).toString('base64url')}`;
}

/** Throws InputInvalidError (BAD_USER_INPUT) for anything but a cursor issued to this tenant. */
export function decodeCursor(keyring: Keyring, tenantId: string, cursor: string): CursorPosition {
  const refuse = () => new InputInvalidError('after', 'after is not a cursor this API returned');
  const [payload, keyId, given, ...rest] = cursor.split('.');
  if (payload === undefined || keyId === undefined || given === undefined || rest.length > 0)
    throw refuse();
  if (!keyring.ids.includes(keyId)) throw refuse();
  const expected = mac(keyring, { keyId, tenantId, payload });
  const givenBytes = Buffer.from(given, 'base64url');
  if (
    givenBytes.length !== expected.length ||
    givenBytes.toString('base64url') !== given ||
    !timingSafeEqual(givenBytes, expected)
  )
    throw refuse();
  // Authentic, so issued by us; the shape is checked anyway, as a key may have been misused.
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw refuse();
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    typeof parsed[0] !== 'string' ||
    !CURSOR_TIME_PATTERN.test(parsed[0]) ||
    typeof parsed[1] !== 'string' ||
    !CURSOR_ID_PATTERN.test(parsed[1])
  )
    throw refuse();
  return { createdUs: parsed[0], id: parsed[1] };
}
