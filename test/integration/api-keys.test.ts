import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TENANT_CACHE_TTL_MS } from '../../gateway/http/tenant-authenticator.ts';
import { upsertTenant } from '../../services/tenants/index.ts';
import { graphql } from '../support/graphql-client.ts';
import { useTestDatabase } from '../support/test-database.ts';
import { startTestStack, TENANT_A, type TestStack } from '../support/test-stack.ts';
import { waitUntil } from '../support/wait-until.ts';
import { runOpsCli } from '../support/ops-cli.ts';

/**
 * A tenant's API keys (docs/api.md §1.3): several at once, issued, listed and revoked through
 * the internal `tenants` router without a restart. A revoked key stops working within the
 * gateway's authentication cache lifetime (TENANT_CACHE_TTL_MS): that bound is what is tested.
 */
const database = useTestDatabase('api-keys');
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ databaseUrl: database.url });
});
afterAll(async () => {
  await stack?.stop();
});

const BALANCES = 'query { balances { currency available } }';

async function statusWith(apiKey: string): Promise<number> {
  return (await graphql(stack.app.url, { apiKey, query: BALANCES })).status;
}

function tenants() {
  return stack.app.services.client.tenants;
}

describe('API keys', () => {
  it('a tenant has several keys at once, each shown once, listed by prefix without the key', async () => {
    const first = await tenants().createApiKey.mutate({ tenant: TENANT_A.name });
    const second = await tenants().createApiKey.mutate({ tenant: TENANT_A.name });
    expect(first.apiKey).toMatch(/^sk_test_[A-Za-z0-9_-]{43}$/);
    expect(first.prefix).toBe(first.apiKey.slice(0, 12));
    expect(await statusWith(first.apiKey)).toBe(200);
    expect(await statusWith(second.apiKey)).toBe(200);
    expect(await statusWith(TENANT_A.apiKey)).toBe(200);

    const listed = await tenants().listApiKeys.query({ tenant: TENANT_A.name });
    expect(JSON.stringify(listed)).not.toContain(first.apiKey);
    expect(listed.map((k) => k.id)).toEqual(expect.arrayContaining([first.id, second.id]));
    const mine = listed.find((k) => k.id === first.id);
    expect(mine).toMatchObject({ prefix: first.prefix, origin: 'issued', revokedAt: null });
    expect(mine?.lastUsedAt).not.toBeNull();
    expect(listed.find((k) => k.origin === 'bootstrap')).toBeDefined();
  });

  it('a revoked key stops working within the authentication cache lifetime; the others go on', async () => {
    const doomed = await tenants().createApiKey.mutate({ tenant: TENANT_A.name });
    const kept = await tenants().createApiKey.mutate({ tenant: TENANT_A.name });
    expect(await statusWith(doomed.apiKey)).toBe(200); // now cached by the gateway
    const revokedAt = Date.now();
    expect(await tenants().revokeApiKey.mutate({ tenant: TENANT_A.name, id: doomed.id })).toEqual({
      revoked: true,
    });
    await waitUntil(async () => (await statusWith(doomed.apiKey)) === 401, {
      timeoutMs: TENANT_CACHE_TTL_MS + 2_000,
      intervalMs: 200,
      what: 'the revoked key to be refused',
    });
    expect(Date.now() - revokedAt).toBeLessThanOrEqual(TENANT_CACHE_TTL_MS + 2_000);
    expect(await statusWith(kept.apiKey)).toBe(200);
    expect(await tenants().revokeApiKey.mutate({ tenant: TENANT_A.name, id: doomed.id })).toEqual({
      revoked: false,
    });
  });

  it('a key past its expiry is refused', async () => {
    const soon = new Date(Date.now() + 3_000).toISOString();
    const expiring = await tenants().createApiKey.mutate({
      tenant: TENANT_A.name,
      expiresAt: soon,
    });
    expect(new Date(expiring.expiresAt ?? 0).toISOString()).toBe(soon);
    expect(await statusWith(expiring.apiKey)).toBe(200);
    await waitUntil(async () => (await statusWith(expiring.apiKey)) === 401, {
      timeoutMs: 3_000 + TENANT_CACHE_TTL_MS + 2_000,
      intervalMs: 200,
      what: 'the expired key to be refused',
    });
  });

  it('refuses an expiry in the past and an unknown tenant', async () => {
    await expect(
      tenants().createApiKey.mutate({
        tenant: TENANT_A.name,
        expiresAt: new Date(Date.now() - 1_000).toISOString(),
      }),
    ).rejects.toThrow('expiresAt must be in the future');
    await expect(tenants().listApiKeys.query({ tenant: 'nobody' })).rejects.toThrow(
      'no tenant named nobody',
    );
  });

  it('a new bootstrap key re-keys the tenant: the old bootstrap key is revoked, issued keys stay', async () => {
    const issued = await tenants()
      .createApiKey.mutate({ tenant: 'rekeyed' })
      .catch(() => null);
    expect(issued).toBeNull(); // no such tenant yet
    const oldKey = 'sk_test_rekeyed_old_000000000000';
    const newKey = 'sk_test_rekeyed_new_000000000000';
    await upsertTenant(stack.db, { name: 'rekeyed', apiKey: oldKey });
    const operatorKey = await tenants().createApiKey.mutate({ tenant: 'rekeyed' });
    await upsertTenant(stack.db, { name: 'rekeyed', apiKey: newKey });
    const keys = await tenants().listApiKeys.query({ tenant: 'rekeyed' });
    const live = keys.filter((k) => k.revokedAt === null).map((k) => k.prefix);
    expect(live).toEqual(expect.arrayContaining([newKey.slice(0, 12), operatorKey.prefix]));
    expect(keys.filter((k) => k.origin === 'bootstrap' && k.revokedAt !== null)).toHaveLength(1);
    await expect(upsertTenant(stack.db, { name: 'other', apiKey: newKey })).rejects.toThrow(
      'its API key belongs to another tenant',
    );
  });
});

describe('npm run ops -- api-keys', () => {
  it('issues a key (printed once), lists it by prefix, and revokes it', async () => {
    const created = await runOpsCli(stack.app.url, [
      'api-keys',
      'create',
      '--tenant',
      TENANT_A.name,
    ]);
    expect(created.code).toBe(0);
    const apiKey = created.stdout.match(/^(sk_test_[A-Za-z0-9_-]{43})$/m)?.[1];
    expect(apiKey).toBeDefined();
    expect(await statusWith(apiKey!)).toBe(200);

    const listed = await runOpsCli(stack.app.url, ['api-keys', 'list', '--tenant', TENANT_A.name]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(apiKey!.slice(0, 12));
    expect(listed.stdout).not.toContain(apiKey!);

    const id = (await tenants().listApiKeys.query({ tenant: TENANT_A.name })).find(
      (k) => k.prefix === apiKey!.slice(0, 12),
    )?.id;
    const revoked = await runOpsCli(stack.app.url, [
      'api-keys',
      'revoke',
      '--tenant',
      TENANT_A.name,
      '--id',
      id!,
    ]);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toContain(`revoked ${id}`);
    const unknown = await runOpsCli(stack.app.url, ['api-keys', 'rotate', '--tenant', 'x']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('the action must be create, list or revoke');
  });
});
