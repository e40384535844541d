import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Keyring } from '../../lib/crypto/keyring.ts';
import type { Queryable } from '../../lib/db/pool.ts';
import { ApiKey } from './api-key.entity.ts';
import { PUT_BOOTSTRAP_KEY, REKEY_API_KEY, UPSERT_TENANT } from './tenants.sql.ts';

/** 32 random bytes: 256 bits, twice the 128 that puts a key beyond any search of its space. */
const API_KEY_RANDOM_BYTES = 32;
const API_KEY_SCHEME = 'sk_test_';
/** Schemes a key may start with (ours, and one an operator gives BOOTSTRAP_TENANTS). */
const API_KEY_SCHEMES = [API_KEY_SCHEME, 'sk_live_'] as const;
/**
 * Characters of a key kept in clear after its scheme: four base64url characters (24 bits) tell a
 * tenant's keys apart in a listing, and leave a 32-character key far beyond guessing.
 */
const API_KEY_DISPLAY_CHARS = 4;
/**
 * A key's last use is written at most this often: on a cache miss, and only if older. A write
 * per request would cost more than "used in the last minute" is worth to anyone reading it.
 */
const LAST_USED_RESOLUTION_MS = 60_000;

export function generateApiKey(): string {
  return `${API_KEY_SCHEME}${randomBytes(API_KEY_RANDOM_BYTES).toString('base64url')}`;
}

/**
 * What is kept of a key in clear, and shown in listings and the start banner: its scheme and
 * four characters (`sk_test_AbCd`), or the first four of a key without a scheme.
 */
export function apiKeyDisplayPrefix(apiKey: string): string {
  const scheme = API_KEY_SCHEMES.find((s) => apiKey.startsWith(s)) ?? '';
  return apiKey.slice(0, scheme.length + API_KEY_DISPLAY_CHARS);
}

/**
 * The key's lookup hash under each data key, the sealing (first) key's first: HMAC-SHA-256 under
 * the HKDF subkey "api-key-lookup". Keyed, so a copy of the table without DATA_ENCRYPTION_KEYS
 * is no oracle for testing guesses; every key of the ring, so a rotation that puts a new data
 * key first leaves existing keys working (each is re-keyed when next used).
 */
export function apiKeyHmacs(keyring: Keyring, apiKey: string): Buffer[] {
  return keyring.ids.map((id) =>
    createHmac('sha256', keyring.subkey('api-key-lookup', id)).update(apiKey).digest(),
  );
}

/** How keys were stored before migrations/0021; read only to find such a row and upgrade it. */
function legacyApiKeyHash(apiKey: string): Buffer {
  return createHash('sha256').update(apiKey).digest();
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
 * The tenant a key authenticates, or null: unknown, revoked or expired. By the key's keyed hash,
 * or by its SHA-256 for a row from before migrations/0021: one indexed statement either way. A
 * key found by its SHA-256, or by the HMAC of a data key no longer first, is re-keyed in place
 * to the first key's HMAC, its SHA-256 cleared: the table keeps no unsalted hash of a key in
 * use. The key itself never reaches the database.
 */
export async function findTenantByApiKey(
  em: EntityManager,
  keyring: Keyring,
  apiKey: string,
): Promise<Tenant | null> {
  const now = new Date();
  const hmacs = apiKeyHmacs(keyring, apiKey);
  const key = await em.findOne(
    ApiKey,
    {
      $and: [
        { $or: [{ keyHmac: { $in: hmacs } }, { keyHash: legacyApiKeyHash(apiKey) }] },
        { $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }] },
      ],
      revokedAt: null,
    },
    { fields: ['id', 'tenant', 'lastUsedAt', 'keyHmacKey'] },
  );
  if (key === null) return null;
  const stale = new Date(now.getTime() - LAST_USED_RESOLUTION_MS);
  if (key.keyHmacKey !== keyring.primaryId) {
    await em.nativeUpdate(
      ApiKey,
      { id: key.id },
      {
        keyHmac: hmacs[0]!,
        keyHmacKey: keyring.primaryId,
        keyHash: null,
        prefix: apiKeyDisplayPrefix(apiKey),
        lastUsedAt: now,
      },
    );
  } else if (key.lastUsedAt === null || key.lastUsedAt === undefined || key.lastUsedAt < stale) {
    await em.nativeUpdate(
      ApiKey,
      { id: key.id, $or: [{ lastUsedAt: null }, { lastUsedAt: { $lt: stale } }] },
      { lastUsedAt: now },
    );
  }
  return { id: key.tenant.id };
}

/** Issues a new key for a tenant. The key is in the answer and nowhere else, ever. */
export async function issueApiKey(
  em: EntityManager,
  keyring: Keyring,
  input: { tenantId: string; expiresAt: Date | null },
): Promise<ApiKeyView & { apiKey: string }> {
  const apiKey = generateApiKey();
  const key = em.create(ApiKey, {
    id: randomUUID(),
    tenant: input.tenantId,
    prefix: apiKeyDisplayPrefix(apiKey),
    keyHmac: apiKeyHmacs(keyring, apiKey)[0]!,
    keyHmacKey: keyring.primaryId,
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
 * The key's row from before migrations/0021 (or under a data key no longer first) is re-keyed
 * first, so the statement after it finds the key by its current HMAC.
 */
export async function upsertTenant(
  db: Queryable,
  keyring: Keyring,
  tenant: { name: string; apiKey: string },
): Promise<string> {
  const { rows } = await db.query<{ id: string }>(UPSERT_TENANT, [randomUUID(), tenant.name]);
  const id = rows[0]?.id;
  if (id === undefined) throw new Error('tenant upsert returned no row');
  const hmacs = apiKeyHmacs(keyring, tenant.apiKey);
  const prefix = apiKeyDisplayPrefix(tenant.apiKey);
  const keyId = keyring.primaryId;
  await db.query(REKEY_API_KEY, [legacyApiKeyHash(tenant.apiKey), hmacs, prefix, keyId]);
  const keyed = await db.query<{ tenant_id: string }>(PUT_BOOTSTRAP_KEY, [
    id,
    randomUUID(),
    prefix,
    hmacs[0],
    keyId,
  ]);
  if (keyed.rows[0]?.tenant_id !== id) {
    throw new Error(`tenant ${tenant.name}: its API key belongs to another tenant`);
  }
  return id;
}
