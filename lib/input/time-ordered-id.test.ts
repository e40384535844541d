import { describe, expect, it } from 'vitest';
import { timeOrderedId } from './time-ordered-id.ts';
import { isCanonicalUuid } from './uuid.ts';

describe('timeOrderedId', () => {
  it('makes canonical UUIDs that sort in the order they were made, across milliseconds', async () => {
    const ids: string[] = [];
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 200; i++) ids.push(timeOrderedId());
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    expect(ids.every(isCanonicalUuid)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    // PostgreSQL compares uuid bytes, and text ids derived from them (evt_payment_<id>_…)
    // compare as strings: both orders are the order of making.
    expect([...ids].sort()).toEqual(ids);
  });
});
