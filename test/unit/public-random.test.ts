import { describe, expect, it } from 'vitest';
import { publicRandomBytes } from '../../lib/crypto/public-random.ts';

describe('random bytes drawn a pool at a time (ADR 0065)', () => {
  it('never hands out the same bytes twice, across many refills of the pool', () => {
    // 96-bit nonces: a repeat here can only be bytes handed out again, never chance.
    const seen = new Set<string>();
    for (let i = 0; i < 5_000; i++) seen.add(publicRandomBytes(12).toString('hex'));
    expect(seen.size).toBe(5_000);
  });

  it('hands out copies: bytes already given keep their value when the pool is refilled', () => {
    const nonce = publicRandomBytes(12);
    const before = Buffer.from(nonce);
    publicRandomBytes(4096); // the whole pool: it is refilled at least once
    publicRandomBytes(4096);
    expect(nonce.equals(before)).toBe(true);
  });

  it('refuses a request larger than its pool instead of repeating bytes', () => {
    expect(() => publicRandomBytes(4097)).toThrow(RangeError);
  });
});
