import { describe, expect, it } from 'vitest';
import { idempotencyAttemptOf, MAX_LOGGED_ATTEMPT } from './idempotency-attempt.ts';

describe('the Idempotency-Attempt header', () => {
  it.each([
    ['1', 1],
    ['7', 7],
    [String(MAX_LOGGED_ATTEMPT), MAX_LOGGED_ATTEMPT],
  ])('logs %s as %d', (header, attempt) => {
    expect(idempotencyAttemptOf(header)).toBe(attempt);
  });

  it.each([
    ['absent', undefined],
    ['zero', '0'],
    ['negative', '-1'],
    ['a leading zero', '01'],
    ['a fraction', '1.5'],
    ['text', 'two'],
    ['padding', ' 2'],
    ['past the bound', String(MAX_LOGGED_ATTEMPT + 1)],
    ['huge', '99999999999999999999'],
    ['repeated', ['1', '2']],
  ])('ignores %s', (_what, header) => {
    expect(idempotencyAttemptOf(header)).toBeUndefined();
  });
});
