import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createRateLimits } from '../../src/http/rate-limits.ts';

/** docs/api.md §1.2: the edge's variables, validated at start, each failure naming its variable. */
describe('edge configuration', () => {
  it('leaves the limits off and tRPC and metrics on PORT unless set', () => {
    expect(loadConfig({})).toMatchObject({
      rateLimitTenantPerSecond: undefined,
      rateLimitTenantBurst: undefined,
      rateLimitUnauthenticatedPerSecond: undefined,
      internalPort: undefined,
      internalHost: '127.0.0.1',
    });
  });

  it('reads every variable', () => {
    expect(
      loadConfig({
        RATE_LIMIT_TENANT_PER_SECOND: '50',
        RATE_LIMIT_TENANT_BURST: '200',
        RATE_LIMIT_UNAUTHENTICATED_PER_SECOND: '5',
        INTERNAL_PORT: '4001',
        INTERNAL_HOST: '10.0.0.7',
      }),
    ).toMatchObject({
      rateLimitTenantPerSecond: 50,
      rateLimitTenantBurst: 200,
      rateLimitUnauthenticatedPerSecond: 5,
      internalPort: 4001,
      internalHost: '10.0.0.7',
    });
  });

  it.each([
    [{ RATE_LIMIT_TENANT_PER_SECOND: '0' }, /RATE_LIMIT_TENANT_PER_SECOND/],
    [{ RATE_LIMIT_TENANT_PER_SECOND: 'ten' }, /RATE_LIMIT_TENANT_PER_SECOND/],
    [
      { RATE_LIMIT_TENANT_PER_SECOND: '5', RATE_LIMIT_TENANT_BURST: '-1' },
      /RATE_LIMIT_TENANT_BURST/,
    ],
    [{ RATE_LIMIT_TENANT_BURST: '10' }, /RATE_LIMIT_TENANT_BURST/],
    [{ RATE_LIMIT_UNAUTHENTICATED_PER_SECOND: '1.5' }, /RATE_LIMIT_UNAUTHENTICATED_PER_SECOND/],
    [{ INTERNAL_PORT: 'x' }, /INTERNAL_PORT/],
    [{ PORT: '4000', INTERNAL_PORT: '4000' }, /INTERNAL_PORT/],
  ])('refuses %j', (env, variable) => {
    expect(() => loadConfig(env)).toThrow(variable);
  });
});

describe('rate limits', () => {
  it('gives a tenant a bucket of twice its rate by default, per tenant', async () => {
    const limits = createRateLimits({ tenantPerSecond: 3 });
    for (let i = 0; i < 6; i++) expect(await limits.tenant('t1')).toBeNull();
    const wait = await limits.tenant('t1');
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(2);
    expect(await limits.tenant('t2')).toBeNull();
  });

  it('counts only failed authentications, per address', async () => {
    const limits = createRateLimits({ unauthenticatedPerSecond: 2 });
    expect(await limits.unauthenticated('192.0.2.1')).toBeNull();
    await limits.failedAuthentication('192.0.2.1');
    expect(await limits.unauthenticated('192.0.2.1')).toBeNull();
    await limits.failedAuthentication('192.0.2.1');
    expect(await limits.unauthenticated('192.0.2.1')).toBe(1);
    expect(await limits.unauthenticated('192.0.2.2')).toBeNull();
  });

  it('is off unless configured', async () => {
    const limits = createRateLimits({});
    for (let i = 0; i < 100; i++) {
      expect(await limits.tenant('t1')).toBeNull();
      await limits.failedAuthentication('192.0.2.1');
    }
    expect(await limits.unauthenticated('192.0.2.1')).toBeNull();
  });
});
