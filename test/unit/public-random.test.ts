import { describe, expect, it } from 'vitest';
import { publicRandomBytes } from '../../lib/crypto/public-random.ts';
import { timeOrderedId } from '../../lib/input/time-ordered-id.ts';

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

describe('time-ordered ids', () => {
  it('are distinct UUIDv7s whose first 48 bits are the time they were made', () => {
    const from = Date.now();
    const ids = Array.from({ length: 2_000 }, () => timeOrderedId());
    const to = Date.now();
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) {
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      const ms = Number.parseInt(id.replace('-', '').slice(0, 12), 16);
      expect(ms).toBeGreaterThanOrEqual(from);
      expect(ms).toBeLessThanOrEqual(to);
    }
  });
});
