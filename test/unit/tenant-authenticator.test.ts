import { describe, expect, it } from 'vitest';
import {
  createTenantAuthenticator,
  TENANT_CACHE_TTL_MS,
  TENANT_REFRESH_AHEAD_MS,
} from '../../gateway/http/tenant-authenticator.ts';

type Answer = { id: string } | null;

/** A lookup whose answers the test hands out, one per call, in order. */
function controlledLookup() {
  const calls: Array<{ apiKey: string; settle: (answer: Answer | Error) => void }> = [];
  const lookup = (apiKey: string) =>
    new Promise<Answer>((resolve, reject) => {
      calls.push({
        apiKey,
        settle: (answer) => (answer instanceof Error ? reject(answer) : resolve(answer)),
      });
    });
  return { calls, lookup };
}

/** An authenticator on a clock the test sets, with 'good' looked up at 0 and cached. */
async function withGoodKeyCached() {
  let clock = 0;
  const { calls, lookup } = controlledLookup();
  const authenticate = createTenantAuthenticator(lookup, { now: () => clock });
  const first = authenticate('good');
  calls[0]!.settle({ id: 't1' });
  await first;
  return { calls, authenticate, at: (ms: number) => void (clock = ms) };
}

describe('the tenant authenticator', () => {
  it('reuses a successful lookup but never caches an unknown key', async () => {
    const lookups: string[] = [];
    const authenticate = createTenantAuthenticator((apiKey) => {
      lookups.push(apiKey);
      return Promise.resolve(apiKey === 'good' ? { id: 't1' } : null);
    });
    expect(await authenticate('good')).toEqual({ id: 't1' });
    expect(await authenticate('good')).toEqual({ id: 't1' });
    expect(await authenticate('bad')).toBeNull();
    expect(await authenticate('bad')).toBeNull();
    expect(lookups).toEqual(['good', 'bad', 'bad']);
  });

  it('sends one lookup for a burst of requests with a key it does not hold', async () => {
    const { calls, lookup } = controlledLookup();
    const authenticate = createTenantAuthenticator(lookup);
    const burst = Array.from({ length: 50 }, () => authenticate('good'));
    const other = authenticate('other');
    expect(calls.map((c) => c.apiKey)).toEqual(['good', 'other']);
    calls[0]!.settle({ id: 't1' });
    calls[1]!.settle(null);
    expect(await Promise.all(burst)).toEqual(Array.from({ length: 50 }, () => ({ id: 't1' })));
    expect(await other).toBeNull();
    // The refusal was shared while in flight, not remembered.
    const again = authenticate('other');
    expect(calls).toHaveLength(3);
    calls[2]!.settle(null);
    expect(await again).toBeNull();
  });

  it('shares a failed lookup with the requests that waited for it, and tries again after', async () => {
    const { calls, lookup } = controlledLookup();
    const authenticate = createTenantAuthenticator(lookup);
    const waiting = [authenticate('good'), authenticate('good')];
    calls[0]!.settle(new Error('database unavailable'));
    for (const answer of waiting) await expect(answer).rejects.toThrow('database unavailable');
    const retry = authenticate('good');
    expect(calls).toHaveLength(2);
    calls[1]!.settle({ id: 't1' });
    expect(await retry).toEqual({ id: 't1' });
  });

  it('looks a key in use up again before its entry expires, without making a request wait', async () => {
    const { calls, authenticate, at } = await withGoodKeyCached();

    at(TENANT_CACHE_TTL_MS - TENANT_REFRESH_AHEAD_MS - 1);
    expect(await authenticate('good')).toEqual({ id: 't1' });
    expect(calls).toHaveLength(1);

    // In the last part of the entry's life: answered from the entry while one refresh is sent.
    at(TENANT_CACHE_TTL_MS - TENANT_REFRESH_AHEAD_MS);
    expect(await authenticate('good')).toEqual({ id: 't1' });
    expect(await authenticate('good')).toEqual({ id: 't1' });
    expect(calls).toHaveLength(2);
    calls[1]!.settle({ id: 't1' });
    await Promise.resolve();

    // The refreshed entry counts from when its lookup was sent.
    at(2 * TENANT_CACHE_TTL_MS - TENANT_REFRESH_AHEAD_MS - 1);
    expect(await authenticate('good')).toEqual({ id: 't1' });
    expect(calls).toHaveLength(2);
  });

  it('drops an entry as soon as a refresh finds the key revoked, and never extends it', async () => {
    const { calls, authenticate, at } = await withGoodKeyCached();

    at(TENANT_CACHE_TTL_MS - 1);
    expect(await authenticate('good')).toEqual({ id: 't1' });
    calls[1]!.settle(null);
    await Promise.resolve();
    await Promise.resolve();

    const refused = authenticate('good');
    expect(calls).toHaveLength(3);
    calls[2]!.settle(null);
    expect(await refused).toBeNull();
  });

  it('keeps serving an entry whose background refresh failed, until it expires', async () => {
    const { calls, authenticate, at } = await withGoodKeyCached();

    at(TENANT_CACHE_TTL_MS - 1);
    expect(await authenticate('good')).toEqual({ id: 't1' });
    calls[1]!.settle(new Error('database unavailable'));
    await Promise.resolve();
    await Promise.resolve();
    // Still served; the next request in the window tries the refresh again.
    expect(await authenticate('good')).toEqual({ id: 't1' });
    expect(calls).toHaveLength(3);
    calls[2]!.settle(new Error('database unavailable'));
    await Promise.resolve();
    await Promise.resolve();

    at(TENANT_CACHE_TTL_MS);
    const expired = authenticate('good');
    expect(calls).toHaveLength(4);
    calls[3]!.settle(null);
    expect(await expired).toBeNull();
  });
});
