import { describe, expect, it } from 'vitest';
import { RecentScopes } from '../../lib/idempotency/recent-scopes.ts';

describe('RecentScopes', () => {
  it('remembers what it met, and nothing else', () => {
    const recent = new RecentScopes(10);
    recent.remember('a');
    expect(recent.has('a')).toBe(true);
    expect(recent.has('b')).toBe(false);
  });

  it('forgets the oldest first, and never holds more than twice its capacity', () => {
    const recent = new RecentScopes(3);
    for (const scope of ['a', 'b', 'c', 'd', 'e', 'f']) recent.remember(scope);
    expect(['a', 'b', 'c', 'd', 'e', 'f'].filter((s) => recent.has(s))).toEqual([
      'a',
      'b',
      'c',
      'd',
      'e',
      'f',
    ]);
    recent.remember('g'); // a third generation begins: the first is gone
    expect(['a', 'b', 'c'].some((s) => recent.has(s))).toBe(false);
    expect(['d', 'e', 'f', 'g'].every((s) => recent.has(s))).toBe(true);
  });

  it('counts a scope met twice once', () => {
    const recent = new RecentScopes(2);
    recent.remember('a');
    recent.remember('a');
    recent.remember('b');
    recent.remember('c'); // starts the second generation: 'a' and 'b' are still held
    expect(recent.has('a') && recent.has('b') && recent.has('c')).toBe(true);
  });

  it('keeps a key reference with its scope, through a second meeting and a new generation', () => {
    const recent = new RecentScopes(2);
    recent.remember('a'); // met without one (no request to log for)
    expect(recent.keyRefOf('a')).toBeUndefined();
    recent.remember('a', 'ref-a');
    recent.remember('a'); // met again without one: the reference stays
    expect(recent.keyRefOf('a')).toBe('ref-a');
    recent.remember('b', 'ref-b');
    recent.remember('c'); // a new generation: 'a' and 'b' are in the older one
    expect([recent.keyRefOf('a'), recent.keyRefOf('b')]).toEqual(['ref-a', 'ref-b']);
    recent.remember('a'); // met again from the older generation: moved, with its reference
    recent.remember('d'); // and the next generation drops 'b' but keeps 'a'
    expect([recent.keyRefOf('a'), recent.keyRefOf('b')]).toEqual(['ref-a', undefined]);
  });

  it('refuses a capacity it could not hold a scope in', () => {
    expect(() => new RecentScopes(0)).toThrow(/capacity/);
  });
});
