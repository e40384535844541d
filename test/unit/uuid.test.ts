import { describe, expect, it } from 'vitest';
import { canonicalUuid, isCanonicalUuid } from '../../lib/input/uuid.ts';

const ID = '3f1c6d2e-8a7b-4c5d-9e0f-1a2b3c4d5e6f';

describe('the UUID check', () => {
  it('takes an id in any case to the spelling PostgreSQL prints', () => {
    expect(canonicalUuid(ID)).toBe(ID);
    expect(canonicalUuid(ID.toUpperCase())).toBe(ID);
  });

  it('accepts as canonical the lower-case spelling only', () => {
    expect(isCanonicalUuid(ID)).toBe(true);
    expect(isCanonicalUuid(ID.toUpperCase())).toBe(false);
  });

  it('names no row with anything that is not a UUID', () => {
    for (const raw of [
      '',
      'no-such-payment',
      `${ID}0`,
      ID.replaceAll('-', ''),
      ` ${ID}`,
      `{${ID}}`,
    ]) {
      expect(canonicalUuid(raw)).toBeNull();
      expect(isCanonicalUuid(raw)).toBe(false);
    }
  });
});
