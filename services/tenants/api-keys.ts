import { createHash, randomBytes } from 'node:crypto';
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../kernel/db/pool.ts';
import { SELECT_TENANT_BY_KEY_HASH, UPSERT_TENANT } from './tenants.sql.ts';

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

export async function findTenantByApiKey(db: Queryable, apiKey: string): Promise<Tenant | null> {
  const { rows } = await db.query<Tenant>(SELECT_TENANT_BY_KEY_HASH, [hashApiKey(apiKey)]);
  return rows[0] ?? null;
}

/** Creates (or re-keys) a tenant; returns its id. */
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
