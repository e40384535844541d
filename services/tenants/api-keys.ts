import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Queryable } from '../../lib/db/pool.ts';
import { ApiKey } from './api-key.entity.ts';
import { Tenant as TenantEntity } from './tenant.entity.ts';
import { PUT_BOOTSTRAP_KEY, UPSERT_TENANT } from './tenants.sql.ts';

/** 32 random bytes: far beyond guessing, which is why a plain SHA-256 protects the stored form. */
const API_KEY_RANDOM_BYTES = 32;
const API_KEY_SCHEME = 'sk_test_';
/** The scheme and four random characters: enough to tell a tenant's keys apart in a listing. */
const API_KEY_PREFIX_CHARS = API_KEY_SCHEME.length + 4;
/**
 * A key's last use is written at most this often: on a cache miss, and only if older. A write
 * per request would cost more than "used in the last minute" is worth to anyone reading it.
 */
const LAST_USED_RESOLUTION_MS = 60_000;

export function generateApiKey(): string {
  return `${API_KEY_SCHEME}${randomBytes(API_KEY_RANDOM_BYTES).toString('base64url')}`;
}

export function hashApiKey(apiKey: string): Buffer {
  return createHash('sha256').update(apiKey).digest();
}

export function apiKeyPrefix(apiKey: string): string {
  return apiKey.slice(0, API_KEY_PREFIX_CHARS);
}

export interface Tenant {
  id: string;
}

/** What a listing shows of a key: never the key, never its hash. */
export interface ApiKeyView {
  id: string;
  prefix: string | null;
  origin: 'bootstrap' | 'issued' | 'migrated';
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

/**
 * The tenant a key authenticates, or null: unknown, revoked or expired. By the key's hash
 * only: the key itself never reaches the database.
 */
export async function findTenantByApiKey(
  em: EntityManager,
  apiKey: string,
  now = new Date(),
): Promise<Tenant | null> {
  const key = await em.findOne(
    ApiKey,
    {
      keyHash: hashApiKey(apiKey),
      revokedAt: null,
      $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }],
    },
    { fields: ['id', 'tenant', 'lastUsedAt'] },
  );
  if (key === null) return null;
  const stale = new Date(now.getTime() - LAST_USED_RESOLUTION_MS);
  if (key.lastUsedAt === null || key.lastUsedAt === undefined || key.lastUsedAt < stale) {
    await em.nativeUpdate(
      ApiKey,
      { id: key.id, $or: [{ lastUsedAt: null }, { lastUsedAt: { $lt: stale } }] },
      { lastUsedAt: now },
    );
  }
  return { id: key.tenant.id };
}

/** The tenant of this name, or null. */
export async function findTenantByName(em: EntityManager, name: string): Promise<Tenant | null> {
  const tenant = await em.findOne(TenantEntity, { name }, { fields: ['id'] });
  return tenant === null ? null : { id: tenant.id };
}

/** Issues a new key for a tenant. The key is in the answer and nowhere else, ever. */
export async function issueApiKey(
  em: EntityManager,
  input: { tenantId: string; expiresAt: Date | null },
): Promise<ApiKeyView & { apiKey: string }> {
  const apiKey = generateApiKey();
  const key = em.create(ApiKey, {
    id: randomUUID(),
    tenant: input.tenantId,
    prefix: apiKeyPrefix(apiKey),
    keyHash: hashApiKey(apiKey),
    origin: 'issued',
    createdAt: new Date(),
    expiresAt: input.expiresAt,
  });
  await em.flush();
  return { ...viewOf(key), apiKey };
}

/** A tenant's keys, oldest first, revoked ones included (an audit wants them). */
export async function listApiKeys(em: EntityManager, tenantId: string): Promise<ApiKeyView[]> {
  const keys = await em.find(ApiKey, { tenant: tenantId }, { orderBy: { createdAt: 'asc' } });
  return keys.map(viewOf);
}

/**
 * Revokes one of a tenant's keys; true if it was live. Running gateways stop accepting it
 * within their authentication cache's lifetime (TENANT_CACHE_TTL_MS in the gateway).
 */
export async function revokeApiKey(
  em: EntityManager,
  input: { tenantId: string; id: string },
): Promise<boolean> {
  const revoked = await em.nativeUpdate(
    ApiKey,
    { id: input.id, tenant: input.tenantId, revokedAt: null },
    { revokedAt: new Date() },
  );
  return revoked > 0;
}

function viewOf(key: {
  id: string;
  prefix?: string | null;
  origin: ApiKeyView['origin'];
  createdAt: Date;
  lastUsedAt?: Date | null;
  expiresAt?: Date | null;
  revokedAt?: Date | null;
}): ApiKeyView {
  return {
    id: key.id,
    prefix: key.prefix ?? null,
    origin: key.origin,
    createdAt: key.createdAt,
    lastUsedAt: key.lastUsedAt ?? null,
    expiresAt: key.expiresAt ?? null,
    revokedAt: key.revokedAt ?? null,
  };
}

/**
 * Creates a tenant (or finds it by name) with `apiKey` as its bootstrap key; returns its id.
 * Hand-written SQL, not the EntityManager: a concurrent start creating the same tenant or key
 * is decided by ON CONFLICT in the database, where a find-then-insert would let both insert.
 */
export async function upsertTenant(
  db: Queryable,
  tenant: { name: string; apiKey: string },
): Promise<string> {
  const { rows } = await db.query<{ id: string }>(UPSERT_TENANT, [randomUUID(), tenant.name]);
  const id = rows[0]?.id;
  if (id === undefined) throw new Error('tenant upsert returned no row');
  const keyed = await db.query<{ tenant_id: string }>(PUT_BOOTSTRAP_KEY, [
    id,
    randomUUID(),
    apiKeyPrefix(tenant.apiKey),
    hashApiKey(tenant.apiKey),
  ]);
  if (keyed.rows[0]?.tenant_id !== id) {
    throw new Error(`tenant ${tenant.name}: its API key belongs to another tenant`);
  }
  return id;
}
