import { describe, expect, it } from 'vitest';
import { backoffDelayMs, retryAfterMsOf, retryDelayMs } from '../../packages/client/src/backoff.ts';
import { Prng } from '../chaos/prng.ts';

const backoff = { baseMs: 100, capMs: 2_000 };

describe('backoff with full jitter', () => {
  it.each([
    [1, 100],
    [2, 200],
    [3, 400],
    [4, 800],
    [5, 1_600],
    [6, 2_000],
    [40, 2_000],
    [10_000, 2_000],
  ])('after attempt %d stays within [0, %d] ms and reaches both ends', (attempt, ceiling) => {
    const rng = Prng.derive(7, `backoff/${attempt}`);
    const draws = Array.from({ length: 2_000 }, () =>
      backoffDelayMs({ attempt, backoff, random: () => rng.next() }),
    );
    for (const draw of draws) {
      expect(Number.isInteger(draw)).toBe(true);
      expect(draw).toBeGreaterThanOrEqual(0);
      expect(draw).toBeLessThanOrEqual(ceiling);
    }
    // Full jitter: the draws spread over the whole range, not its upper half.
    expect(Math.min(...draws)).toBeLessThan(ceiling * 0.05);
    expect(Math.max(...draws)).toBeGreaterThan(ceiling * 0.95);
  });

  it('stays within its ceiling whatever the random source returns', () => {
    for (const value of [-1, 0, 0.5, 0.999999, 1, 7, Number.NaN]) {
      const delay = backoffDelayMs({ attempt: 3, backoff, random: () => value });
      expect(delay >= 0 && delay <= 400, `random ${value} gave ${delay}`).toBe(true);
    }
  });

  it('waits at least what Retry-After asked, and the backoff when that is longer', () => {
    const random = () => 0.5;
    expect(retryDelayMs({ attempt: 1, backoff, random, retryAfterMs: 30_000 })).toBe(30_000);
    expect(retryDelayMs({ attempt: 5, backoff, random, retryAfterMs: 100 })).toBe(800);
    expect(retryDelayMs({ attempt: 5, backoff, random, retryAfterMs: undefined })).toBe(800);
  });
});

describe('Retry-After', () => {
  const nowMs = Date.parse('2030-01-01T00:00:00Z');

  it('reads delta-seconds, an HTTP date, or extensions.retryAfterSeconds', () => {
    expect(retryAfterMsOf({ header: '2', extensionSeconds: undefined, nowMs })).toBe(2_000);
    expect(retryAfterMsOf({ header: '0', extensionSeconds: 5, nowMs })).toBe(0);
    expect(
      retryAfterMsOf({ header: 'Tue, 01 Jan 2030 00:00:03 GMT', extensionSeconds: 1, nowMs }),
    ).toBe(3_000);
    expect(retryAfterMsOf({ header: null, extensionSeconds: 30, nowMs })).toBe(30_000);
  });

  it('ignores what is not a wait', () => {
    for (const header of [null, '', 'soon', '-1', '1.5e3x']) {
      expect(retryAfterMsOf({ header, extensionSeconds: 'x', nowMs })).toBeUndefined();
    }
    expect(retryAfterMsOf({ header: null, extensionSeconds: -2, nowMs })).toBeUndefined();
    // A date in the past: retry now.
    expect(
      retryAfterMsOf({ header: 'Mon, 31 Dec 2029 00:00:00 GMT', extensionSeconds: 9, nowMs }),
    ).toBe(0);
  });
});
