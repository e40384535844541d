import { createHash } from 'node:crypto';

/**
 * How long a successful API-key lookup is reused. The price: a re-keyed or removed tenant keeps
 * working in an already-running gateway for up to this long. Five seconds saves a database
 * round trip on nearly every request while keeping that window shorter than a client's retry.
 */
export const TENANT_CACHE_TTL_MS = 5_000;
/** Bounds memory whatever the traffic; past it the oldest entry goes first. */
const TENANT_CACHE_MAX_ENTRIES = 10_000;

export interface AuthenticatedTenant {
  id: string;
}

/**
 * Resolves API keys to tenants through `lookup`, remembering only successes and only by the
 * key's hash. Unknown keys always reach the database, so a failure is never cached.
 */
export function createTenantAuthenticator(
  lookup: (apiKey: string) => Promise<AuthenticatedTenant | null>,
) {
  const cache = new Map<string, { tenant: AuthenticatedTenant; expiresAt: number }>();
  return async function authenticate(apiKey: string): Promise<AuthenticatedTenant | null> {
    const id = createHash('sha256').update(apiKey).digest('base64');
    const hit = cache.get(id);
    const now = Date.now();
    if (hit !== undefined && hit.expiresAt > now) return hit.tenant;
    cache.delete(id);
    const tenant = await lookup(apiKey);
    if (tenant !== null) {
      if (cache.size >= TENANT_CACHE_MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
      cache.set(id, { tenant: { id: tenant.id }, expiresAt: now + TENANT_CACHE_TTL_MS });
    }
    return tenant;
  };
}
