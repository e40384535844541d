import { createCipheriv, createDecipheriv } from 'node:crypto';
import { publicRandomBytes } from './public-random.ts';
import { CiphertextRejectedError } from '../errors.ts';

/**
 * The text form of one AES-256-GCM ciphertext: `v1.<keyId>.<iv>.<tag>.<ciphertext>`, each part
 * base64url. It names the key that sealed it, so a keyring with several keys opens it without
 * trying each one, and a rotation never has to rewrite a row to keep it readable. It fits a
 * `text` column and a JSON string alike, and no plaintext we store looks like it: answers are
 * JSON objects and signing secrets start with `whsec_`.
 */
export const ENVELOPE_PREFIX = 'v1.';

/** GCM's recommended nonce: random per seal, so a key seals at most 2^32 values (ADR 0001). */
const IV_BYTES = 12;
/** The full tag: a shorter one lets a forgery through more often for no saving worth having. */
const TAG_BYTES = 16;
const ALGORITHM = 'aes-256-gcm';
/** A key id is a short label: no dot, so the envelope splits unambiguously. */
export const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;
const ENVELOPE_PATTERN =
  /^v1\.([A-Za-z0-9_-]{1,32})\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]*)$/;

/**
 * What a ciphertext is bound to: the row it belongs to (purpose, tenant, scope). Opening it with
 * any other associated data fails, so a ciphertext copied onto another row is refused, not
 * replayed as that row's. JSON of an array: no two part lists encode alike.
 */
export function associatedData(parts: readonly string[]): Buffer {
  return Buffer.from(JSON.stringify(parts), 'utf8');
}

export function isEnvelope(text: string): boolean {
  return text.startsWith(ENVELOPE_PREFIX);
}

/** The key id an envelope names, or null when the text is not an envelope. */
export function envelopeKeyId(text: string): string | null {
  return ENVELOPE_PATTERN.exec(text)?.[1] ?? null;
}

export function sealEnvelope(
  key: { id: string; bytes: Buffer },
  plaintext: Buffer,
  aad: Buffer,
): string {
  const parts = gcmSeal(key.bytes, plaintext, aad).map((b) => b.toString('base64url'));
  return `${ENVELOPE_PREFIX}${key.id}.${parts.join('.')}`;
}

/**
 * Opens an envelope sealed under `keyBytes` (the key its id names). Any change to a byte of it,
 * or other associated data, fails GCM's authentication: CiphertextRejectedError, never garbage.
 */
export function openEnvelope(
  envelope: string,
  keyBytes: Buffer,
  context: { aad: Buffer; what: string },
): Buffer {
  const match = ENVELOPE_PATTERN.exec(envelope);
  if (match === null) throw new CiphertextRejectedError(`${context.what} (not a v1 envelope)`);
  const [iv, tag, ciphertext] = [match[2]!, match[3]!, match[4]!].map((part) =>
    Buffer.from(part, 'base64url'),
  );
  return gcmOpen(keyBytes, [iv!, tag!, ciphertext!], context);
}

/**
 * The binary form of the same envelope, for a `bytea` column: the format byte, the key id's
 * length in one byte, the key id, then the IV, the tag and the ciphertext as raw bytes. It holds
 * what the text form holds in three quarters of the room, since nothing is base64 (ADR 0060).
 */
const BINARY_FORMAT_V1 = 0x01;
const BINARY_KEY_ID_AT = 2;

export function sealBinaryEnvelope(
  key: { id: string; bytes: Buffer },
  plaintext: Buffer,
  aad: Buffer,
): Buffer {
  return Buffer.concat([binaryEnvelopePrefix(key.id), ...gcmSeal(key.bytes, plaintext, aad)]);
}

/** The bytes every binary envelope sealed under `keyId` starts with. */
export function binaryEnvelopePrefix(keyId: string): Buffer {
  const id = Buffer.from(keyId, 'ascii');
  return Buffer.concat([Buffer.from([BINARY_FORMAT_V1, id.length]), id]);
}

/** The key id a binary envelope names, or null when the bytes are not one. */
export function binaryEnvelopeKeyId(sealed: Buffer): string | null {
  if (sealed.length < BINARY_KEY_ID_AT || sealed[0] !== BINARY_FORMAT_V1) return null;
  const end = BINARY_KEY_ID_AT + sealed[1]!;
  if (sealed.length < end + IV_BYTES + TAG_BYTES) return null;
  // latin1: one character a byte, so a byte with its high bit set fails the pattern ('ascii'
  // would drop that bit and read another key's id).
  const keyId = sealed.toString('latin1', BINARY_KEY_ID_AT, end);
  return KEY_ID_PATTERN.test(keyId) ? keyId : null;
}

/** openEnvelope for the binary form. */
export function openBinaryEnvelope(
  sealed: Buffer,
  keyBytes: Buffer,
  context: { aad: Buffer; what: string },
): Buffer {
  const keyId = binaryEnvelopeKeyId(sealed);
  if (keyId === null) throw new CiphertextRejectedError(`${context.what} (not a v1 envelope)`);
  const ivAt = BINARY_KEY_ID_AT + keyId.length;
  const tagAt = ivAt + IV_BYTES;
  const ciphertextAt = tagAt + TAG_BYTES;
  return gcmOpen(
    keyBytes,
    [
      sealed.subarray(ivAt, tagAt),
      sealed.subarray(tagAt, ciphertextAt),
      sealed.subarray(ciphertextAt),
    ],
    context,
  );
}

/** [iv, tag, ciphertext] of `plaintext` sealed under `keyBytes`, bound to `aad`. */
function gcmSeal(keyBytes: Buffer, plaintext: Buffer, aad: Buffer): [Buffer, Buffer, Buffer] {
  const iv = publicRandomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, keyBytes, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(aad);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return [iv, cipher.getAuthTag(), ciphertext];
}

function gcmOpen(
  keyBytes: Buffer,
  [iv, tag, ciphertext]: [Buffer, Buffer, Buffer],
  context: { aad: Buffer; what: string },
): Buffer {
  const { aad, what } = context;
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) {
    throw new CiphertextRejectedError(`${what} (malformed envelope)`);
  }
  try {
    const decipher = createDecipheriv(ALGORITHM, keyBytes, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(aad);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
  } catch (error) {
    throw new CiphertextRejectedError(what, { cause: error });
  }
}
