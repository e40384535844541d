/**
 * The two tiers of the chaos suite and the gateway settings they run with. Fault counts are set
 * for the tier's default number of operations and scale with `--ops`, so a short run keeps the
 * same fault density instead of being all faults or none.
 */

export interface Tier {
  name: 'ci' | 'soak';
  operations: number;
  sigkills: number;
  sigstops: number;
  backendKills: number;
  /** Requests in flight at once across all clients: the machine has 2 shared cores. */
  httpConcurrency: number;
  /** Logical operations under way at once (in flight or waiting out a backoff). */
  activeOperations: number;
  /** The whole load phase gives up after this; a run that needs longer is a failure. */
  loadDeadlineMs: number;
}

export const CI_TIER: Tier = {
  name: 'ci',
  operations: 1_500,
  sigkills: 32,
  sigstops: 8,
  backendKills: 24,
  httpConcurrency: 32,
  activeOperations: 96,
  loadDeadlineMs: 8 * 60_000,
};

export const SOAK_TIER: Tier = {
  name: 'soak',
  operations: 24_000,
  sigkills: 370,
  sigstops: 90,
  backendKills: 64,
  httpConcurrency: 32,
  activeOperations: 96,
  loadDeadlineMs: 6 * 60 * 60_000,
};

/** The tier with its fault counts scaled to `operations` (never below one of each). */
export function scaledTier(tier: Tier, operations: number): Tier {
  if (operations === tier.operations) return tier;
  const scale = (count: number) => Math.max(1, Math.round((count * operations) / tier.operations));
  return {
    ...tier,
    operations,
    sigkills: scale(tier.sigkills),
    sigstops: scale(tier.sigstops),
    backendKills: scale(tier.backendKills),
  };
}

/**
 * Short leases, sweeps and windows so that, within minutes, the recovery worker resumes what a
 * SIGKILL left behind, a paused owner is taken over, requests become unknown and reconciliation
 * settles them. The relations that keep the run meaningful rather than merely fast:
 * - LEASE_MS (2 s) exceeds one provider call plus one probe (2 × 700 ms), as the engine
 *   requires, so only a pause or a kill (not a live owner) loses a lease;
 * - a SIGSTOP lasts longer than LEASE_MS (see PAUSE_MS in schedule.ts), so a takeover happens;
 * - PROVIDER_APPLY_WINDOW_MS (3.5 s) exceeds the sandbox's slowest application (pm_card_slow,
 *   3 s after receipt): a shorter window would let reconciliation "prove" a charge absent that
 *   the provider was still about to make — a harness error, not an engine bug.
 */
export const PROVIDER_TIMEOUT_MS = 700;

/**
 * Retention with one-minute partitions (the narrowest the gateway accepts), so that during a
 * run partition boundaries pass every minute: requests are admitted on one side of a boundary
 * and finish on the other (finishing moves expires_at, hence the row, across partitions),
 * duplicates race across one, and maintenance creates partitions under traffic. The replay
 * window stays the default day: no key expires during a run, so every replay must still match.
 */
export const RETENTION = { ttlSeconds: 86_400, partitionSeconds: 60 } as const;

export const GATEWAY_ENV: Readonly<Record<string, string>> = {
  LEASE_MS: '2000',
  RECOVERY_INTERVAL_MS: '250',
  RECOVERY_BACKOFF_BASE_MS: '250',
  PROVIDER_TIMEOUT_MS: String(PROVIDER_TIMEOUT_MS),
  PROVIDER_UNKNOWN_AFTER_ATTEMPTS: '3',
  PROVIDER_APPLY_WINDOW_MS: '3500',
  RECONCILIATION_INTERVAL_MS: '1000',
  OUTBOX_INTERVAL_MS: '250',
  OUTBOX_CLAIM_LEASE_MS: '2000',
  IDEMPOTENCY_TTL_SECONDS: String(RETENTION.ttlSeconds),
  IDEMPOTENCY_PARTITION_SECONDS: String(RETENTION.partitionSeconds),
  RETENTION_INTERVAL_MS: '10000',
  // The harness's webhook sink listens on loopback (webhook-sink.ts): allowed by configuration,
  // as an operator would, never by a looser policy.
  WEBHOOK_ALLOWED_HOSTS: '127.0.0.1/32',
};

/**
 * pm_card_unknown hides its charge this long: longer than the gateway's three attempts
 * (PROVIDER_UNKNOWN_AFTER_ATTEMPTS) usually take, so most such payments become unknown and
 * reconciliation finds their charge; a few are answered by an attempt after the blackhole.
 */
export const SANDBOX_ENV: Readonly<Record<string, string>> = {
  SANDBOX_BLACKHOLE_MS: '8000',
  SANDBOX_STATEMENT_LAG_MS: '1000',
};

/** Gateway processes side by side: one can take over while the other is paused or restarting. */
export const GATEWAY_COUNT = 2;
