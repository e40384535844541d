import { createHash } from 'node:crypto';

/**
 * How long a successful API-key lookup is reused. The price: a re-keyed or removed tenant keeps
 * working in an already-running gateway for up to this long. Five seconds saves a database
 * round trip on nearly every request while keeping that window shorter than a client's retry.
 */
export const TENANT_CACHE_TTL_MS = 5_000;
/**
 * In the last part of an entry's life, the request that reads it also starts one lookup in the
 * background, so that a key in steady use is looked up again before its entry expires, never by
 * a request that waits for it.
 */
export const TENANT_REFRESH_AHEAD_MS = 1_000;
/** Bounds memory whatever the traffic; past it the oldest entry goes first. */
const TENANT_CACHE_MAX_ENTRIES = 10_000;

export interface AuthenticatedTenant {
  id: string;
}

export interface TenantAuthenticatorOptions {
  /** The clock entries expire by (tests move it). */
  now?: () => number;
}

/**
 * Resolves API keys to tenants through `lookup`, remembering only successes and only by the
 * key's hash. Unknown keys always reach the database, so a failure is never cached.
 *
 * One lookup per key at a time. Without that, an entry that expires under a burst (a storm of
 * duplicates: hundreds of requests of one tenant in flight at once) sent one lookup per request
 * in flight, each holding a pooled connection that admissions waited for. Requests that find
 * the key's lookup in flight share its answer, a refusal or an error included: they would each
 * have got the same from a lookup of their own. An entry is good for TENANT_CACHE_TTL_MS from
 * the moment its lookup was sent, so a refresh never stretches the window in which a revoked
 * key still works; a refresh that finds the key gone removes the entry at once.
 */
export function createTenantAuthenticator(
  lookup: (apiKey: string) => Promise<AuthenticatedTenant | null>,
  options: TenantAuthenticatorOptions = {},
) {
  const now = options.now ?? Date.now;
  const cache = new Map<string, { tenant: AuthenticatedTenant; expiresAt: number }>();
  const inFlight = new Map<string, Promise<AuthenticatedTenant | null>>();

  function lookUp(id: string, apiKey: string): Promise<AuthenticatedTenant | null> {
    const sentAt = now();
    const answer = lookup(apiKey)
      .then((tenant) => {
        cache.delete(id);
        if (tenant !== null) {
          if (cache.size >= TENANT_CACHE_MAX_ENTRIES) {
            cache.delete(cache.keys().next().value as string);
          }
          cache.set(id, { tenant: { id: tenant.id }, expiresAt: sentAt + TENANT_CACHE_TTL_MS });
        }
        return tenant;
      })
      .finally(() => inFlight.delete(id));
    inFlight.set(id, answer);
    return answer;
  }

  return async function authenticate(apiKey: string): Promise<AuthenticatedTenant | null> {
    const id = createHash('sha256').update(apiKey).digest('base64');
    const pending = inFlight.get(id);
    const hit = cache.get(id);
    const at = now();
    if (hit !== undefined && hit.expiresAt > at) {
      if (pending === undefined && hit.expiresAt - at <= TENANT_REFRESH_AHEAD_MS) {
        // Nobody waits for it: a failed refresh leaves the entry to expire as it would have.
        lookUp(id, apiKey).catch(() => undefined);
      }
      return hit.tenant;
    }
    return pending ?? lookUp(id, apiKey);
  };
}
