/**
 * The two tiers of the chaos suite and the gateway settings they run with. Fault counts are set
 * for the tier's default number of operations and scale with `--ops`, so a short run keeps the
 * same fault density instead of being all faults or none.
 */

export interface Tier {
  name: 'ci' | 'soak' | 'failover' | 'split';
  operations: number;
  sigkills: number;
  sigstops: number;
  backendKills: number;
  /**
   * Network episodes (test/support/tcp-fault-proxy.ts) on the paths from the gateways to
   * PostgreSQL and to the provider: latency spikes, resets, blackholes, half-open connections.
   */
  networkFaults: number;
  /** The tiers on a pg_auto_failover formation only: crashes of the primary's whole node… */
  primaryKills: number;
  /** …planned switchovers… */
  switchovers: number;
  /** …and a frozen synchronous standby, which holds every commit until the monitor acts. */
  standbyStalls: number;
  /** Run on a formation (scripts/ha/formation.sh), not a single PostgreSQL. */
  formation: boolean;
  /**
   * The services apart: SPLIT_PAYMENTS payments processes (each gateway reaches one) and one
   * provider process, reached through SERVICE_URLS and a fault proxy per hop: network episodes
   * hit the hops too.
   */
  split: boolean;
  /** SIGKILLs of a service process (split tiers): payments or provider, each restarted at once. */
  serviceKills: number;
  /**
   * The negative control: an asynchronous standby, held behind before each primary crash, so
   * the failover loses commits that clients were told about. The run passes only if the
   * auditor reports those lost acknowledgements.
   */
  negativeControl: boolean;
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
  networkFaults: 16,
  primaryKills: 0,
  switchovers: 0,
  standbyStalls: 0,
  formation: false,
  split: false,
  serviceKills: 0,
  negativeControl: false,
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
  networkFaults: 240,
  primaryKills: 0,
  switchovers: 0,
  standbyStalls: 0,
  formation: false,
  split: false,
  serviceKills: 0,
  negativeControl: false,
  httpConcurrency: 32,
  activeOperations: 96,
  loadDeadlineMs: 6 * 60 * 60_000,
};

/**
 * The failover tier: the same clients and process faults, fewer of them, on a formation whose
 * primary is crashed and switched over while traffic runs. A failover takes seconds, not
 * milliseconds, so the run is shorter in operations and longer per operation.
 */
export const FAILOVER_TIER: Tier = {
  name: 'failover',
  operations: 900,
  sigkills: 6,
  sigstops: 2,
  backendKills: 6,
  networkFaults: 8,
  primaryKills: 2,
  switchovers: 2,
  standbyStalls: 2,
  formation: true,
  split: false,
  serviceKills: 0,
  negativeControl: false,
  httpConcurrency: 32,
  activeOperations: 96,
  loadDeadlineMs: 10 * 60_000,
};

/**
 * The split tier: the CI tier's clients and faults against two gateways, two payments processes
 * and one provider process, each its own process. Service processes are SIGKILLed and restarted
 * while payments are in flight, and every hop has a fault proxy of its own. No hop may lose a
 * charge or make one twice.
 */
export const SPLIT_TIER: Tier = {
  ...CI_TIER,
  name: 'split',
  operations: 1_000,
  sigkills: 12,
  sigstops: 4,
  backendKills: 8,
  networkFaults: 12,
  split: true,
  serviceKills: 12,
};

/** The failover tier as the negative control: one crash, after the standby fell behind. */
export const NEGATIVE_CONTROL_TIER: Tier = {
  ...FAILOVER_TIER,
  operations: 400,
  sigkills: 0,
  sigstops: 0,
  backendKills: 0,
  networkFaults: 0,
  primaryKills: 1,
  switchovers: 0,
  standbyStalls: 0,
  negativeControl: true,
};

/** The tier with its fault counts scaled to `operations` (never below one of each). */
export function scaledTier(tier: Tier, operations: number): Tier {
  if (operations === tier.operations) return tier;
  const scale = (count: number) =>
    count === 0 ? 0 : Math.max(1, Math.round((count * operations) / tier.operations));
  return {
    ...tier,
    operations,
    sigkills: scale(tier.sigkills),
    sigstops: scale(tier.sigstops),
    backendKills: scale(tier.backendKills),
    networkFaults: scale(tier.networkFaults),
    primaryKills: scale(tier.primaryKills),
    switchovers: scale(tier.switchovers),
    standbyStalls: scale(tier.standbyStalls),
    serviceKills: scale(tier.serviceKills),
  };
}

/**
 * Short leases, sweeps and windows so that, within minutes, the recovery worker resumes what a
 * SIGKILL left behind, a paused owner is taken over, requests become unknown and reconciliation
 * settles them. The relations that keep the run meaningful rather than merely fast:
 * - LEASE_MS (2 s) exceeds one provider call plus one probe (2 × 700 ms), as the engine
 *   requires, so only a pause or a kill (not a live owner) loses a lease;
 * - a SIGSTOP lasts longer than LEASE_MS (see PAUSE_MS in schedule.ts), so a takeover happens;
 * - PROVIDER_APPLY_WINDOW_MS (9 s) exceeds the sandbox's slowest application (pm_card_slow,
 *   3 s after receipt) plus the longest a network episode holds a request on its way
 *   (NETWORK_MS in schedule.ts, 5 s): a shorter window would let reconciliation "prove" a
 *   charge absent that the provider was still about to receive and make — a harness error,
 *   not an engine bug. (Production sets it from the provider's own promise.)
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
  PROVIDER_APPLY_WINDOW_MS: '9000',
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

/** Payments processes in a split tier, as many as the gateways: gateway i reaches process i. */
export const SPLIT_PAYMENTS = GATEWAY_COUNT;
