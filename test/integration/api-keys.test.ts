import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TENANT_CACHE_TTL_MS } from '../../gateway/http/tenant-authenticator.ts';
import { upsertTenant } from '../../services/tenants/index.ts';
import { graphql } from '../support/graphql-client.ts';
import { useTestDatabase } from '../support/test-database.ts';
import {
  startTestStack,
  TENANT_A,
  TEST_DATA_ENCRYPTION_KEYS,
  testKeyring,
  type TestStack,
} from '../support/test-stack.ts';
import { findTenantByApiKey } from '../../services/tenants/api-keys.ts';
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
    await expect(tenants().listApiKeys.query({ tenant: 'nobody' })).rejects.toMatchObject({
      message: 'no such tenant: nobody',
      data: { code: 'NOT_FOUND' },
    });
  });

  it('a new bootstrap key re-keys the tenant: the old bootstrap key is revoked, issued keys stay', async () => {
    const issued = await tenants()
      .createApiKey.mutate({ tenant: 'rekeyed' })
      .catch(() => null);
    expect(issued).toBeNull(); // no such tenant yet
    const oldKey = 'sk_test_rekeyed_old_000000000000';
    const newKey = 'sk_test_rekeyed_new_000000000000';
    await upsertTenant(stack.db, testKeyring(), { name: 'rekeyed', apiKey: oldKey });
    const operatorKey = await tenants().createApiKey.mutate({ tenant: 'rekeyed' });
    await upsertTenant(stack.db, testKeyring(), { name: 'rekeyed', apiKey: newKey });
    const keys = await tenants().listApiKeys.query({ tenant: 'rekeyed' });
    const live = keys.filter((k) => k.revokedAt === null).map((k) => k.prefix);
    expect(live).toEqual(expect.arrayContaining([newKey.slice(0, 12), operatorKey.prefix]));
    expect(keys.filter((k) => k.origin === 'bootstrap' && k.revokedAt !== null)).toHaveLength(1);
    await expect(
      upsertTenant(stack.db, testKeyring(), { name: 'other', apiKey: newKey }),
    ).rejects.toThrow('its API key belongs to another tenant');
  });
});

describe('keys stored before keyed hashes (migrations/0021)', () => {
  const sha256 = (key: string) => createHash('sha256').update(key).digest();
  /** The table as a dump shows it: every column of every row, bytea as hex. */
  async function tableDump(): Promise<string> {
    const { rows } = await stack.db.query<{ row: string }>(
      `SELECT row_to_json(k)::text AS row FROM api_keys k`,
    );
    return rows.map((r) => r.row).join('\n');
  }
  /** A row as 0012 wrote it: the key's first 12 characters and its unsalted SHA-256. */
  async function seedLegacyKey(apiKey: string, origin: 'issued' | 'bootstrap'): Promise<string> {
    const { rows } = await stack.db.query<{ id: string }>(
      `INSERT INTO api_keys (id, tenant_id, prefix, key_hash, origin)
       VALUES (gen_random_uuid(), $1, $2, $3, $4) RETURNING id`,
      [stack.tenantIds.a, apiKey.slice(0, 12), sha256(apiKey), origin],
    );
    return rows[0]!.id;
  }
  async function rowOf(id: string) {
    const { rows } = await stack.db.query<{
      prefix: string | null;
      key_hash: Buffer | null;
      key_hmac: Buffer | null;
    }>(`SELECT prefix, key_hash, key_hmac FROM api_keys WHERE id = $1`, [id]);
    return rows[0];
  }

  it('authenticates by its SHA-256, then holds only its HMAC and a short prefix', async () => {
    const legacyKey = 'legacy_tenant_a_key_0123456789abcdefghij';
    const id = await seedLegacyKey(legacyKey, 'issued');
    expect(await statusWith(legacyKey)).toBe(200);
    expect(await rowOf(id)).toEqual({
      prefix: 'lega',
      key_hash: null,
      key_hmac: expect.any(Buffer) as Buffer,
    });
    // Found by its HMAC from now on: the internal procedure has no cache in front of it.
    expect(await tenants().authenticate.query({ apiKey: legacyKey })).toEqual({
      id: stack.tenantIds.a,
    });
    const dump = await tableDump();
    for (const key of [legacyKey, TENANT_A.apiKey]) {
      expect(dump).not.toContain(sha256(key).toString('hex'));
      expect(dump).not.toContain(key.slice(0, 13));
    }
    expect(dump).not.toContain(legacyKey.slice(0, 5));
  });

  it('a key hashed under a data key no longer first authenticates, and is re-keyed to the first', async () => {
    const issued = await tenants().createApiKey.mutate({ tenant: TENANT_A.name });
    const other = `rot1:${Buffer.alloc(32, 0x33).toString('base64')}`;
    const em = () => stack.app.services.deps.orm.em.fork();
    // DATA_ENCRYPTION_KEYS=rot1,test1: the rotation's second step (ADR 0001).
    const rotated = testKeyring(`${other},${TEST_DATA_ENCRYPTION_KEYS}`);
    expect(await findTenantByApiKey(em(), rotated, issued.apiKey)).toEqual({
      id: stack.tenantIds.a,
    });
    const keyOf = async () =>
      (
        await stack.db.query<{ key_hmac_key: string }>(
          `SELECT key_hmac_key FROM api_keys WHERE id = $1`,
          [issued.id],
        )
      ).rows[0]?.key_hmac_key;
    expect(await keyOf()).toBe('rot1');
    // And back, for the stack's own keyring.
    const back = testKeyring(`${TEST_DATA_ENCRYPTION_KEYS},${other}`);
    expect(await findTenantByApiKey(em(), back, issued.apiKey)).toEqual({ id: stack.tenantIds.a });
    expect(await keyOf()).toBe('test1');
  });

  it('a bootstrap key stored by its SHA-256 is upgraded at start, and stays the tenant’s', async () => {
    const legacyKey = 'legacy_bootstrap_key_0123456789abcdefghij';
    const id = await seedLegacyKey(legacyKey, 'bootstrap');
    expect(
      await upsertTenant(stack.db, testKeyring(), { name: TENANT_A.name, apiKey: legacyKey }),
    ).toBe(stack.tenantIds.a);
    expect(await rowOf(id)).toMatchObject({ prefix: 'lega', key_hash: null });
    const keys = await tenants().listApiKeys.query({ tenant: TENANT_A.name });
    expect(keys.find((k) => k.id === id)).toMatchObject({ origin: 'bootstrap', revokedAt: null });
    expect(await tenants().authenticate.query({ apiKey: legacyKey })).toEqual({
      id: stack.tenantIds.a,
    });
    // Put the stack's own bootstrap key back, as a restart with BOOTSTRAP_TENANTS would.
    await upsertTenant(stack.db, testKeyring(), TENANT_A);
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
