import { createHash, randomBytes } from 'node:crypto';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Queryable } from '../kernel/db/pool.ts';
import { Tenant as TenantEntity } from './tenant.entity.ts';
import { UPSERT_TENANT } from './tenants.sql.ts';

/** 32 random bytes: far beyond guessing, which is why a plain SHA-256 protects the stored form. */
const API_KEY_RANDOM_BYTES = 32;

export function generateApiKey(): string {
  return `sk_test_${randomBytes(API_KEY_RANDOM_BYTES).toString('base64url')}`;
}

export function hashApiKey(apiKey: string): Buffer {
  return createHash('sha256').update(apiKey).digest();
}

export interface Tenant {
  id: string;
  name: string;
}

/** By the key's hash only: the key itself never reaches the database. */
export async function findTenantByApiKey(
  em: EntityManager,
  apiKey: string,
): Promise<Tenant | null> {
  const tenant = await em.findOne(
    TenantEntity,
    { apiKeyHash: hashApiKey(apiKey) },
    { fields: ['id', 'name'] },
  );
  return tenant === null ? null : { id: tenant.id, name: tenant.name };
}

/**
 * Creates (or re-keys) a tenant; returns its id. Hand-written SQL, not the EntityManager: a
 * concurrent create of the same name is decided by ON CONFLICT in the database, where a
 * find-then-insert would let both callers insert and one fail.
 */
export async function upsertTenant(
  db: Queryable,
  tenant: { name: string; apiKey: string },
): Promise<string> {
  const { rows } = await db.query<{ id: string }>(UPSERT_TENANT, [
    randomUUID(),
    tenant.name,
    hashApiKey(tenant.apiKey),
  ]);
  const id = rows[0]?.id;
  if (id === undefined) throw new Error('tenant upsert returned no row');
  return id;
}
