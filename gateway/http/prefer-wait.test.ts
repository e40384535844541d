import { describe, expect, it } from 'vitest';
import { keyWaitCapMs, preferredWaitSeconds } from './prefer-wait.ts';

describe('Prefer: wait (RFC 7240)', () => {
  it.each([
    ['wait=5', 5],
    ['WAIT = 3', 3],
    ['wait="7"', 7],
    ['respond-async, wait=4', 4],
    ['wait=2;foo=bar', 2],
    ['handling=lenient,wait=0', 0],
    ['wait=100', 100],
  ])('%s prefers %i seconds', (header, seconds) => {
    expect(preferredWaitSeconds(header)).toBe(seconds);
  });

  it.each([
    [undefined],
    [''],
    ['respond-async'],
    ['wait'],
    ['wait=-1'],
    ['wait=1.5'],
    ['wait=abc'],
    ['wait=12345678901'],
    ['waiting=5'],
    ['wait=abc, wait=5'], // the first wait counts, and it is malformed
  ])('%s states no wait', (header) => {
    expect(preferredWaitSeconds(header)).toBeNull();
  });

  it('takes the first of several Prefer headers', () => {
    expect(preferredWaitSeconds(['respond-async', 'wait=3', 'wait=9'])).toBe(3);
  });

  it('caps a wait at a provider call and a probe, and at 10 s', () => {
    expect(keyWaitCapMs(2_000)).toBe(4_000);
    expect(keyWaitCapMs(5_000)).toBe(10_000);
    expect(keyWaitCapMs(30_000)).toBe(10_000);
  });
});
