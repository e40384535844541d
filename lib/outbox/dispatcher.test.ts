import { describe, expect, it } from 'vitest';
import { BATCH_SIZE, IDLE_POLL_CAP_MS, nextPollDelayMs } from './dispatcher.ts';

const INTERVAL = 250;

describe('the outbox dispatcher between claims', () => {
  it.each([
    ['a full batch: at once, more is due', BATCH_SIZE, INTERVAL, 0],
    ['one short of a full batch: the interval', BATCH_SIZE - 1, 0, INTERVAL],
    ['a partial batch: the interval', 5, 1_000, INTERVAL],
    ['an empty claim after work: twice the interval', 0, 0, 2 * INTERVAL],
    ['an empty claim after an empty one: twice the last wait', 0, 500, 1_000],
    ['idle for long: the cap', 0, IDLE_POLL_CAP_MS, IDLE_POLL_CAP_MS],
    ['a failed claim: the interval', undefined, IDLE_POLL_CAP_MS, INTERVAL],
  ] as const)('%s', (...[, handled, previousDelayMs, expected]) => {
    expect(nextPollDelayMs(handled, { previousDelayMs, intervalMs: INTERVAL })).toBe(expected);
  });

  it('an interval longer than the cap is never shortened by idling', () => {
    expect(nextPollDelayMs(0, { previousDelayMs: 5_000, intervalMs: 5_000 })).toBe(5_000);
  });
});
