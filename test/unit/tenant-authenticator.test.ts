import { describe, expect, it } from 'vitest';
import { createTenantAuthenticator } from '../../gateway/http/tenant-authenticator.ts';

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
});
