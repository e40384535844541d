import { randomFillSync } from 'node:crypto';

/** How many bytes one draw from the CSPRNG fills: hundreds of nonces and ids. */
const POOL_BYTES = 4096;

/**
 * Random bytes for values that are public once used: AES-GCM nonces, which travel beside their
 * ciphertext, and the random part of ids. Drawn from the CSPRNG a pool at a time, as Node does
 * for `randomUUID`: each call of `randomBytes` is a trip into OpenSSL's generator that costs a
 * busy request path more than the rest of the nonce's sealing (ADR 0065).
 *
 * Failure modes it must not have, and why it does not:
 * - A byte handed out twice would repeat a GCM nonce under one key, which breaks the cipher.
 *   Every call copies its bytes out and moves past them; the pool is refilled from the CSPRNG,
 *   never reused (test/unit/public-random.test.ts).
 * - Secret material must not come from here: a key drawn from a pool sits in memory before its
 *   use, beside other callers' bytes. Keys take `randomBytes` directly (keyring.ts).
 *
 * One pool per process, at module level, although the house passes state in: it holds nothing a
 * caller configures or a test replaces, only the CSPRNG's output, as Node's own cache behind
 * `randomUUID` does, and two stacks in one process may share it safely.
 */
class PublicRandomPool {
  private readonly pool = Buffer.allocUnsafe(POOL_BYTES);
  private used = POOL_BYTES;

  take(length: number): Buffer {
    if (length > POOL_BYTES) throw new RangeError(`at most ${POOL_BYTES} bytes at a time`);
    if (this.used + length > POOL_BYTES) {
      randomFillSync(this.pool);
      this.used = 0;
    }
    const bytes = Buffer.allocUnsafe(length);
    this.pool.copy(bytes, 0, this.used, this.used + length);
    this.used += length;
    return bytes;
  }
}

const shared = new PublicRandomPool();

/** `length` fresh random bytes, never handed out before. Not for keys. */
export function publicRandomBytes(length: number): Buffer {
  return shared.take(length);
}
