import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalJson, type JsonValue } from '../canonical-json.ts';
import type { Keyring } from '../crypto/keyring.ts';
import type { OperationDef } from './operation.ts';

/** What a hash is made of besides the command: the operation id, as stored with the key. */
type OperationId = Pick<OperationDef, 'id'>;

/**
 * The hash that tells "a retry of the same command" from "another command wearing the same
 * key". It covers the operation id (with its version) and the validated, normalised command —
 * never raw bytes, never the key itself or credentials. Changing what goes in here changes the
 * contract: old retries would start to look different.
 */
function canonicalRequest(operation: OperationId, command: JsonValue): string {
  return canonicalJson({ operation: operation.id, command });
}

/**
 * The first hash: plain SHA-256 of the canonical request. Commands are guessable (an amount, a
 * currency, a test card), so a database reader could confirm a guess against it; rows are no
 * longer written with it, but rows written before still verify by it (`request_hash_key` NULL).
 */
export function requestHash(operation: OperationId, command: JsonValue): Buffer {
  return createHash('sha256').update(canonicalRequest(operation, command)).digest();
}

/** A request hash as stored: the digest and the data key it was keyed by (null: plain SHA-256). */
export interface StoredRequestHash {
  digest: Buffer;
  keyId: string | null;
}

/**
 * The hash new rows are written with: HMAC-SHA256 of the canonical request, keyed by a subkey of
 * the keyring's first key, stored with that key's id. A rotation puts another key first; the
 * rows already written keep naming theirs, so their meaning never changes in flight.
 */
export function keyedRequestHash(
  keyring: Keyring,
  operation: OperationId,
  command: JsonValue,
): StoredRequestHash {
  const keyId = keyring.primaryId;
  return { digest: hmac(keyring, keyId, canonicalRequest(operation, command)), keyId };
}

/**
 * Whether `command` is the request a stored hash was made from, by the hash's own scheme and
 * under the operation id the row was written with (an earlier version's, after a bump). A key
 * that is no longer in the keyring throws DataKeyUnknownError: refusing is better than calling
 * a retry a different request (or a different request a retry).
 */
export function requestHashMatches(
  keyring: Keyring,
  request: { operation: OperationId; command: JsonValue },
  stored: StoredRequestHash,
): boolean {
  const { operation, command } = request;
  const expected =
    stored.keyId === null
      ? requestHash(operation, command)
      : hmac(keyring, stored.keyId, canonicalRequest(operation, command));
  return expected.length === stored.digest.length && timingSafeEqual(expected, stored.digest);
}

function hmac(keyring: Keyring, keyId: string, canonical: string): Buffer {
  return createHmac('sha256', keyring.subkey('request-hash', keyId, 'a request hash'))
    .update(canonical)
    .digest();
}
