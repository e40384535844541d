import type { Keyring } from '../../lib/crypto/keyring.ts';
import { InputInvalidError } from '../../lib/errors.ts';
import { decodeSignedCursor, encodeSignedCursor } from '../../lib/input/signed-cursor.ts';
import { isCanonicalUuid } from '../../lib/input/uuid.ts';

/**
 * A page position: the last payment's creation time (microseconds since the epoch) and id. Ties
 * on the time are broken by the id, so a page boundary never repeats or skips a payment.
 */
export interface CursorPosition {
  createdUs: string;
  id: string;
}

/**
 * Microseconds since the epoch, at most 16 digits (until about the year 2286). A cursor's time is
 * multiplied into an interval and added to a timestamp: a larger one would overflow there, and
 * PostgreSQL's out-of-range error would surface as a 500.
 */
const CURSOR_TIME_PATTERN = /^(0|[1-9]\d{0,15})$/;

/**
 * `payload.keyId.mac` (lib/input/signed-cursor.ts): the position, and a MAC under the tenant
 * and a data key. Only cursors this API issued to this tenant decode; one from another tenant,
 * or edited by hand, is refused before it reaches SQL.
 */
export function encodeCursor(keyring: Keyring, tenantId: string, at: CursorPosition): string {
  return encodeSignedCursor(keyring, tenantId, [at.createdUs, at.id]);
}

/** Throws InputInvalidError (BAD_USER_INPUT) for anything but a cursor issued to this tenant. */
export function decodeCursor(keyring: Keyring, tenantId: string, cursor: string): CursorPosition {
  const fields = decodeSignedCursor(keyring, tenantId, cursor);
  // Authentic, so issued by us; the shape is checked anyway, as a key may have been misused.
  const [createdUs, id] = fields;
  if (
    fields.length !== 2 ||
    createdUs === undefined ||
    !CURSOR_TIME_PATTERN.test(createdUs) ||
    id === undefined ||
    // Ids come back from PostgreSQL in lower case: an issued cursor has no other spelling.
    !isCanonicalUuid(id)
  )
    throw new InputInvalidError('after', 'after is not a cursor this API returned');
  return { createdUs, id };
}
