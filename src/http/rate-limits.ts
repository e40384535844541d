import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

/** docs/api.md §1.4: every limit is off unless its rate is set. */
export interface RateLimitOptions {
  /** RATE_LIMIT_TENANT_PER_SECOND: requests per second per tenant. */
  tenantPerSecond?: number;
  /** RATE_LIMIT_TENANT_BURST: the tenant's bucket size; 2 × the rate unless set. */
  tenantBurst?: number;
  /**
   * RATE_LIMIT_UNAUTHENTICATED_PER_SECOND: failed authentications per second per TCP peer
   * address. Behind a proxy every client has the proxy's address, and one client failing gets
   * them all refused (docs/decisions/0002-rate-limits-per-process.md).
   */
  unauthenticatedPerSecond?: number;
}

/** The bucket is twice the rate unless configured: one second's worth of catch-up. */
const DEFAULT_BURST_PER_RATE = 2;
/** The window of the failed-authentication limit: its rate is per second. */
const UNAUTHENTICATED_WINDOW_SECONDS = 1;

/**
 * The gateway's request limits, per process (docs/decisions/0002-rate-limits-per-process.md):
 * a fleet of N gateways lets a tenant send N × the rate. Each answer is null (go on) or the
 * whole seconds, at least 1, a refused client should wait (Retry-After).
 */
export interface RateLimits {
  /** Takes one of the tenant's tokens; seconds to wait when it has none. */
  tenant(tenantId: string): Promise<number | null>;
  /**
   * Whether `address` has used up its failed authentications: checked before the key lookup,
   * so that a client guessing keys stops reaching the database.
   */
  unauthenticated(address: string): Promise<number | null>;
  /** Counts a failed authentication from `address`; successes never count. */
  failedAuthentication(address: string): Promise<void>;
}

/**
 * rate-limiter-flexible's memory limiter counts points in a fixed window that opens at a key's
 * first point. The tenant bucket is a window of `burst` points lasting `burst / rate` seconds:
 * a full bucket may go at once, the average over each window is the rate, and the worst case
 * (a full window at the end of one and the start of the next) is 2 × burst in a moment. A true
 * token bucket would refill continuously; this refills whole, which only ever refuses a client
 * that has just spent a full bucket. Entries expire with their window, so memory is bounded by
 * the keys active within one.
 */
export function createRateLimits(options: RateLimitOptions): RateLimits {
  const tenantLimiter = tenantBucket(options);
  const unauthenticatedLimiter =
    options.unauthenticatedPerSecond === undefined
      ? null
      : new RateLimiterMemory({
          keyPrefix: 'unauthenticated',
          points: options.unauthenticatedPerSecond,
          duration: UNAUTHENTICATED_WINDOW_SECONDS,
        });
  return {
    async tenant(tenantId) {
      if (tenantLimiter === null) return null;
      try {
        await tenantLimiter.consume(tenantId);
        return null;
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) return retryAfterSeconds(rejection.msBeforeNext);
        throw rejection;
      }
    },
    async unauthenticated(address) {
      if (unauthenticatedLimiter === null) return null;
      const used = await unauthenticatedLimiter.get(address);
      // A window past its end whose timer has not yet removed it counts as closed.
      if (used === null || used.msBeforeNext <= 0) return null;
      return used.consumedPoints >= unauthenticatedLimiter.points
        ? retryAfterSeconds(used.msBeforeNext)
        : null;
    },
    async failedAuthentication(address) {
      await unauthenticatedLimiter?.penalty(address);
    },
  };
}

function tenantBucket(options: RateLimitOptions): RateLimiterMemory | null {
  const rate = options.tenantPerSecond;
  if (rate === undefined) return null;
  const burst = options.tenantBurst ?? DEFAULT_BURST_PER_RATE * rate;
  return new RateLimiterMemory({ keyPrefix: 'tenant', points: burst, duration: burst / rate });
}

/** Retry-After is whole seconds; rounding down to 0 would invite an immediate retry. */
function retryAfterSeconds(msBeforeNext: number): number {
  return Math.max(1, Math.ceil(msBeforeNext / 1000));
}
