import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETENTION_POLICY,
  partitionSlackSeconds,
} from '../../lib/idempotency/retention.ts';

const HOUR = 3_600;
const DAY = 86_400;

describe('the slack partition maintenance keeps beyond a new key expiry', () => {
  it('is a day in whole partitions, at least one and at most three of them', () => {
    const slack = (partitionSeconds: number) =>
      partitionSlackSeconds({ ...DEFAULT_RETENTION_POLICY, partitionSeconds });
    expect(slack(DAY)).toBe(DAY);
    expect(slack(7 * DAY)).toBe(7 * DAY);
    expect(slack(10 * HOUR)).toBe(30 * HOUR);
    // Narrow partitions: a day of them would be thousands per table, so three.
    expect(slack(HOUR)).toBe(3 * HOUR);
    expect(slack(60)).toBe(180);
  });
});
