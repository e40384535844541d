import { hkdfSync, randomBytes } from 'node:crypto';
import { CiphertextRejectedError, DataKeyUnknownError } from '../errors.ts';
import {
  binaryEnvelopeKeyId,
  envelopeKeyId,
  KEY_ID_PATTERN,
  openBinaryEnvelope,
  openEnvelope,
  sealBinaryEnvelope,
  sealEnvelope,
} from './envelope.ts';

/** AES-256 and HMAC-SHA256 both want 32 bytes; a shorter configured key is a typo, refused. */
export const DATA_KEY_BYTES = 32;

/**
 * What each subkey is for. Every use gets its own key derived from the configured one (HKDF):
 * the same bytes never serve two algorithms, and a leaked HMAC key opens no ciphertext.
 */
export type KeyPurpose = 'seal' | 'request-hash' | 'key-ref' | 'cursor' | 'api-key-lookup';
const HKDF_INFO: Record<KeyPurpose, string> = {
  seal: 'payments-gateway/aes-256-gcm/v1',
  'request-hash': 'payments-gateway/request-hash/v1',
  'key-ref': 'payments-gateway/key-ref/v1',
  cursor: 'payments-gateway/cursor/v1',
  'api-key-lookup': 'payments-gateway/api-key-lookup/v1',
};

export interface DataKey {
  id: string;
  key: Buffer;
}

/**
 * The data-encryption keyring (DATA_ENCRYPTION_KEYS, `id:base64key,…`): the first key seals
 * and keys new hashes, every key opens. Stored values name the key they were made with, so
 * putting a new key first changes what new rows use and nothing about existing ones. A new key
 * is added last everywhere before it goes first, so no gateway meets a value it cannot open; a
 * key leaves only once nothing names it: `ops reencrypt` moves every sealed value to the first
 * key, and hashes keyed by it must outlive one replay window (ADR 0001 has the runbook).
 */
export class Keyring {
  readonly primaryId: string;
  private readonly keys: ReadonlyMap<string, Buffer>;
  /** Derived subkeys by purpose and key id: HKDF is cheap, but not free on every request. */
  private readonly derived = new Map<string, Buffer>();

  constructor(entries: readonly DataKey[]) {
    const first = entries[0];
    if (first === undefined) throw new Error('a keyring needs at least one key');
    const keys = new Map<string, Buffer>();
    for (const { id, key } of entries) {
      if (!KEY_ID_PATTERN.test(id)) throw new Error(`key id "${id}" must match ${KEY_ID_PATTERN}`);
      if (key.length !== DATA_KEY_BYTES)
        throw new Error(`key "${id}" is ${key.length} bytes, not ${DATA_KEY_BYTES}`);
      if (keys.has(id)) throw new Error(`key id "${id}" appears twice`);
      keys.set(id, key);
    }
    this.keys = keys;
    this.primaryId = first.id;
  }

  /**
   * Parses `id:base64key,…`. Throws one line naming the variable and what is wrong with it,
   * never echoing key material.
   */
  static parse(raw: string, variable = 'DATA_ENCRYPTION_KEYS'): Keyring {
    const entries = raw
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry !== '')
      .map((entry, index) => {
        const at = entry.indexOf(':');
        const id = entry.slice(0, at);
        const encoded = entry.slice(at + 1);
        if (at < 1 || !KEY_ID_PATTERN.test(id)) {
          throw new Error(
            `${variable}: entry ${index + 1} must be id:base64key with an id of [A-Za-z0-9_-]{1,32}`,
          );
        }
        const key = Buffer.from(encoded, 'base64');
        // Buffer.from ignores what is not base64: re-encode to catch a mangled value.
        const canonical = key.toString('base64').replace(/=+$/, '');
        if (key.length !== DATA_KEY_BYTES || canonical !== encoded.replace(/=+$/, '')) {
          throw new Error(
            `${variable}: key "${id}" must be ${DATA_KEY_BYTES} bytes in base64 (openssl rand -base64 32)`,
          );
        }
        return { id, key };
      });
    if (entries.length === 0)
      throw new Error(`${variable} is empty: give at least one id:base64key`);
    try {
      return new Keyring(entries);
    } catch (error) {
      throw new Error(`${variable}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** A fresh single-key keyring and its DATA_ENCRYPTION_KEYS form (embedded mode keeps it). */
  static generate(id: string): { keyring: Keyring; spec: string } {
    const key = randomBytes(DATA_KEY_BYTES);
    return { keyring: new Keyring([{ id, key }]), spec: `${id}:${key.toString('base64')}` };
  }

  get ids(): string[] {
    return [...this.keys.keys()];
  }

  /** Seals `plaintext` under the first key, bound to `aad` (envelope.ts associatedData). */
  seal(plaintext: string, aad: Buffer): string {
    return sealEnvelope(
      { id: this.primaryId, bytes: this.subkey('seal', this.primaryId) },
      Buffer.from(plaintext, 'utf8'),
      aad,
    );
  }

  /**
   * Opens an envelope under the key it names. DataKeyUnknownError when that key is not here;
   * CiphertextRejectedError when it was altered or belongs to another row. `what` names the
   * value in either message.
   */
  open(envelope: string, aad: Buffer, what: string): string {
    const keyId = envelopeKeyId(envelope);
    if (keyId === null) throw new CiphertextRejectedError(`${what} (not a v1 envelope)`);
    const key = this.subkey('seal', keyId, what);
    return openEnvelope(envelope, key, { aad, what }).toString('utf8');
  }

  /** seal, in the binary form (envelope.ts sealBinaryEnvelope), for a `bytea` column. */
  sealBinary(plaintext: string, aad: Buffer): Buffer {
    return sealBinaryEnvelope(
      { id: this.primaryId, bytes: this.subkey('seal', this.primaryId) },
      Buffer.from(plaintext, 'utf8'),
      aad,
    );
  }

  /** open, for the binary form. */
  openBinary(sealed: Buffer, aad: Buffer, what: string): string {
    const keyId = binaryEnvelopeKeyId(sealed);
    if (keyId === null) throw new CiphertextRejectedError(`${what} (not a v1 envelope)`);
    const key = this.subkey('seal', keyId, what);
    return openBinaryEnvelope(sealed, key, { aad, what }).toString('utf8');
  }

  /** The subkey of `purpose` derived from key `keyId` (the first key unless named). */
  subkey(purpose: KeyPurpose, keyId: string = this.primaryId, what = 'a stored value'): Buffer {
    const cacheKey = `${purpose}/${keyId}`;
    const cached = this.derived.get(cacheKey);
    if (cached !== undefined) return cached;
    const key = this.keys.get(keyId);
    if (key === undefined) throw new DataKeyUnknownError(keyId, what);
    const subkey = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), HKDF_INFO[purpose], 32));
    this.derived.set(cacheKey, subkey);
    return subkey;
  }
}
