import { createTRPCClient, localLink, type TRPCClient } from '@trpc/client';
import type { ServiceContext, ServiceDeps, ServiceMetrics } from '../services/context.ts';
import { warnIfAutovacuumOff } from '../lib/db/autovacuum-check.ts';
import { readReplication } from '../lib/db/replication.ts';
import { createPool } from '../lib/db/pool.ts';
import { KeyWatcher } from '../lib/idempotency/key-watcher.ts';
import { createReadSide } from './read-side.ts';
import { ProviderKeySecret } from '../services/payments/index.ts';
import type { Logger } from '../lib/logging/logger.ts';
import type { RequestTrace } from '../lib/logging/request-trace.ts';
import type { Keyring } from '../lib/crypto/keyring.ts';
import type { FaultPoints } from '../lib/faults.ts';
import { IdempotencyEngine } from '../lib/idempotency/engine.ts';
import { AdmissionsInFlight } from '../lib/idempotency/admissions-in-flight.ts';
import { RecentScopes } from '../lib/idempotency/recent-scopes.ts';
import { scopeIdsOf } from '../lib/idempotency/operation.ts';
import { RecoveryWorker } from '../lib/idempotency/recovery-worker.ts';
import { unfinishedByOperation } from '../lib/idempotency/inspection.ts';
import {
  insertableUntil,
  maintainPartitions,
  partitionSlackSeconds,
  type RetentionPolicy,
  type RetentionRun,
} from '../lib/idempotency/retention.ts';
import { PeriodicJob } from '../lib/periodic-job.ts';
import { OutboxDispatcher } from '../lib/outbox/dispatcher.ts';
import { ledgerHandler } from '../services/ledger/index.ts';
import { notificationHandlers, receiptsHandler } from '../services/notifications/index.ts';
import { reconcileUnknownRequests } from '../services/payments/index.ts';
import { paymentResumers, RESUMABLE_OPERATIONS } from '../services/payments/index.ts';
import { initialiseSeries, registerFleetGauges } from '../lib/metrics.ts';
import type { OutboxPruned, OutboxRetentionPolicy } from '../lib/outbox/outbox-retention.ts';
import { createOutboxRetention } from './outbox-retention-job.ts';
import type { ServiceName } from './topology.ts';
import { readBacklog } from '../lib/outbox/outbox.ts';
import {
  MANAGE_WEBHOOK_OPERATIONS,
  REGISTER_WEBHOOK_ENDPOINT,
} from '../services/notifications/index.ts';
import { initialiseProviderSeries } from '../services/provider/index.ts';
import { providerHop, serviceHops, type HopsConfig } from './service-hops.ts';
import { initialiseLedgerSeries } from '../services/ledger/index.ts';
import { createWebhookEgress } from '../services/notifications/index.ts';
import type { WebhookAllowList } from '../services/notifications/index.ts';
import {
  appRouter,
  createServiceCaller,
  type AppRouter,
  type ServiceCaller,
} from '../services/router.ts';

export interface ServicesConfig extends HopsConfig {
  databaseUrl: string;
  poolMax: number;
  /** statement_timeout of the pool; db/pool.ts's request default unless set. */
  statementTimeoutMs?: number;
  leaseMs: number;
  ttlSeconds: number;
  retention: RetentionPolicy;
  retentionIntervalMs: number;
  outboxRetention: OutboxRetentionPolicy;
  answerMaxBytes: number;
  recoveryIntervalMs: number;
  reconciliationIntervalMs: number;
  outboxIntervalMs: number;
  outboxClaimLeaseMs?: number;
  unknownAfterAttempts: number;
  providerApplyWindowMs: number;
  backoffBaseMs: number;
  latestMigration: string;
  /** WEBHOOK_ALLOWED_HOSTS: loopback or private hosts webhooks may reach (development, tests). */
  webhookAllowList: WebhookAllowList;
  webhookEndpointsPerTenant: number;
  faults: FaultPoints;
  metrics: ServiceMetrics;
  /** DATA_ENCRYPTION_KEYS, parsed and validated by whoever starts the process. */
  keyring: Keyring;
  log: Logger;
  /** Unexpected errors, with the logger of the request they happened in when there is one. */
  onError: (error: unknown, log?: Logger) => void;
}

export interface Services {
  deps: ServiceDeps;
  /** A typed tRPC client that calls the routers in this process (tRPC's local link). */
  client: TRPCClient<AppRouter>;
  /** The same routers through tRPC's server-side caller, with the process-wide deps. */
  caller: ServiceCaller;
  /**
   * The routers for one request, through tRPC's server-side caller: what the request path uses.
   * Every procedure it calls, and every procedure those call, sees `trace`.
   */
  callerFor: (trace: RequestTrace) => ServiceCaller;
  /** The tRPC context of one request (the /trpc HTTP handler's). */
  contextFor: (trace: RequestTrace) => ServiceContext;
  worker: RecoveryWorker;
  /** Settles unknown outcomes against the provider's statement on a schedule. */
  reconciler: PeriodicJob;
  /** Delivers outbox events to the ledger, receipts and webhook endpoints. */
  dispatcher: OutboxDispatcher;
  /** Creates partitions ahead and drops those past retention, on a schedule. */
  retention: PeriodicJob;
  /** One maintenance run now (at start, before serving; and for tests and operators). */
  maintainPartitions(): Promise<RetentionRun>;
  /** Deletes events, deliveries and inbox rows past their window, on the same schedule. */
  outboxRetention: PeriodicJob;
  /** One outbox retention run now (for tests and operators). */
  pruneOutbox(): Promise<OutboxPruned>;
  /** Start-up checks of the server's settings, logged as warnings (autovacuum-check.ts). */
  checkDatabaseSettings(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The `service` label of what belongs to the process rather than to one service: its recovery
 * sweeps, retention runs and replication gauges. `gateway`, as docs/api.md §5 has always said,
 * whichever services the process runs.
 */
const PROCESS_SERVICE: ServiceName = 'gateway';

/** Consumer kinds of the outbox (`webhook` is every merchant endpoint's `webhook:<id>`). */
const OUTBOX_CONSUMERS = ['ledger', 'receipts', 'webhooks', 'webhook'];

/** The ledger consumes its own deliveries; receipts and webhooks belong to notifications. */
function serviceOfConsumer(consumerKind: string): ServiceName {
  return consumerKind === 'ledger' ? 'ledger' : 'notifications';
}

/**
 * Connections of the outbox's own pool. In the request path's pool the dispatcher's claims and
 * its consumers' batches queued behind every request in flight: at 64 concurrent requests on a
 * pool of 20 the backlog when a burst ended grew to two seconds of deliveries. A claim and a
 * batch at a time need two; webhook marks a couple more.
 */
const OUTBOX_POOL_MAX = 4;

/** The recovery worker never waits longer than this between attempts at one request. */
const BACKOFF_CAP_MS = 5 * 60_000;

/**
 * Every consumer of the outbox, by kind: the ledger and receipts a claim's worth at a time, the
 * webhook fan-out and each endpoint's delivery one by one (each its own HTTP call).
 */
export function outboxConsumers(deps: ServiceDeps, caller: ServiceCaller) {
  return {
    handlers: notificationHandlers(deps),
    batchHandlers: { ledger: ledgerHandler(caller.ledger), receipts: receiptsHandler(deps) },
  };
}

export function createServices(config: ServicesConfig): Services {
  const pool = createPool({
    connectionString: config.databaseUrl,
    max: config.poolMax,
    applicationName: 'payments-services',
    statementTimeoutMs: config.statementTimeoutMs,
  });
  const { orm, authOrm, reads } = createReadSide(config);
  const keyWatcher = new KeyWatcher({
    connectionString: config.databaseUrl,
    applicationName: 'payments-key-watcher',
    log: config.log,
  });
  const engine = new IdempotencyEngine({
    pool,
    faults: config.faults,
    metrics: config.metrics,
    log: config.log,
    trace: null,
    leaseMs: config.leaseMs,
    ttlSeconds: config.ttlSeconds,
    answerMaxBytes: config.answerMaxBytes,
    unknownAfterAttempts: config.unknownAfterAttempts,
    backoffBaseMs: config.backoffBaseMs,
    backoffCapMs: BACKOFF_CAP_MS,
    keyring: config.keyring,
    keyWatcher,
    admissions: new AdmissionsInFlight(),
    recentScopes: new RecentScopes(),
  });
  const provider = providerHop(config);
  const hops = serviceHops(config);
  const webhookEgress = createWebhookEgress({ allowList: config.webhookAllowList });
  const deps: ServiceDeps = {
    pool,
    orm,
    authOrm,
    reads,
    engine,
    faults: config.faults,
    metrics: config.metrics,
    keyring: config.keyring,
    log: config.log,
    trace: null,
    forTrace: (trace) => boundTo(trace).deps,
    providerAdapter: provider.adapter,
    provider: provider.portFor(null, () => localCaller),
    providerKeySecret: new ProviderKeySecret(pool),
    webhookEgress,
    config: {
      providerTimeoutMs: config.providerTimeoutMs,
      providerMaxAttempts: config.providerMaxAttempts,
      providerApplyWindowMs: config.providerApplyWindowMs,
      latestMigration: config.latestMigration,
    },
    webhookEndpointsPerTenant: config.webhookEndpointsPerTenant,
  };
  const localCaller = createServiceCaller({ deps });
  const caller = hops.callerFor(localCaller, null);
  /** Deps and caller for one request; each sees the other, so provider calls see the trace. */
  const boundTo = (trace: RequestTrace): { deps: ServiceDeps; caller: ServiceCaller } => {
    const bound: ServiceDeps = {
      ...deps,
      log: trace.log,
      engine: engine.forTrace(trace),
      trace,
      provider: provider.portFor(trace.requestId, () => boundCaller),
    };
    const boundCaller = createServiceCaller({ deps: bound });
    return { deps: bound, caller: hops.callerFor(boundCaller, trace) };
  };
  const client = createTRPCClient<AppRouter>({
    links: [localLink({ router: appRouter, createContext: () => Promise.resolve({ deps }) })],
  });
  const operations = new Map(
    [...RESUMABLE_OPERATIONS, REGISTER_WEBHOOK_ENDPOINT, ...MANAGE_WEBHOOK_OPERATIONS].flatMap(
      (op) => scopeIdsOf(op).map((id) => [id, op] as const),
    ),
  );
  initialiseSeries(config.metrics, {
    operations: [...new Set(operations.values())],
    consumers: OUTBOX_CONSUMERS.map((consumer) => ({
      consumer,
      service: serviceOfConsumer(consumer),
    })),
    jobs: PROCESS_SERVICE,
  });
  initialiseProviderSeries(
    config.metrics,
    RESUMABLE_OPERATIONS.map((op) => op.publicName),
  );
  initialiseLedgerSeries(config.metrics);
  registerFleetGauges(
    config.metrics,
    {
      unfinished: () => unfinishedByOperation(pool, operations),
      outbox: async () => {
        // Every known consumer reports, at zero when nothing is pending: "No data" on a panel
        // must mean "not scraped", never "all delivered".
        const pending = new Map((await readBacklog(pool)).map((row) => [row.consumer, row]));
        return [...new Set([...OUTBOX_CONSUMERS, ...pending.keys()])].map((consumer) => ({
          consumer,
          service: serviceOfConsumer(consumer),
          pending: pending.get(consumer)?.pending ?? 0,
          oldestAgeSeconds: pending.get(consumer)?.oldestAgeSeconds ?? 0,
        }));
      },
      // The request pool: it writes, so it reaches the primary, whose standbys these are.
      replication: () => readReplication(pool),
    },
    PROCESS_SERVICE,
  );
  const worker = new RecoveryWorker(engine, {
    intervalMs: config.recoveryIntervalMs,
    resumers: paymentResumers(deps),
    service: PROCESS_SERVICE,
    onError: config.onError,
  });
  const reconciler = new PeriodicJob(() => reconcileUnknownRequests(deps, 'reconciliation'), {
    intervalMs: config.reconciliationIntervalMs,
    onError: config.onError,
  });
  const outboxPool = createPool({
    connectionString: config.databaseUrl,
    max: OUTBOX_POOL_MAX,
    applicationName: 'payments-outbox',
    statementTimeoutMs: config.statementTimeoutMs,
  });
  const outboxDeps: ServiceDeps = { ...deps, pool: outboxPool };
  const dispatcher = new OutboxDispatcher({
    pool: outboxPool,
    faults: config.faults,
    ...outboxConsumers(outboxDeps, createServiceCaller({ deps: outboxDeps })),
    metrics: config.metrics,
    serviceOf: serviceOfConsumer,
    intervalMs: config.outboxIntervalMs,
    claimLeaseMs: config.outboxClaimLeaseMs,
    onError: config.onError,
  });
  config.metrics.partitionsSlack.set(
    { service: PROCESS_SERVICE },
    partitionSlackSeconds(config.retention),
  );
  // Maintenance's statements may run for minutes (SET_MAINTENANCE_STATEMENT_TIMEOUT): its pool
  // has no request statement timeout, and so no client-side bound cut to a request's size.
  const maintenancePool = createPool({
    connectionString: config.databaseUrl,
    max: 1,
    applicationName: 'payments-maintenance',
    statementTimeoutMs: 0,
    planCacheMode: 'auto',
  });
  const runRetention = async () => {
    try {
      const run = await maintainPartitions(maintenancePool, config.retention);
      config.metrics.retentionRuns.inc({ service: PROCESS_SERVICE, result: run.result });
      return run;
    } catch (error) {
      config.metrics.retentionRuns.inc({ service: PROCESS_SERVICE, result: 'error' });
      throw error;
    } finally {
      // Whatever the run did, or another process did: a failing job is what this must show.
      const until = await insertableUntil(pool, config.retention).catch(() => undefined);
      if (until !== undefined) {
        config.metrics.partitionsInsertableUntil.set(
          { service: PROCESS_SERVICE },
          until.getTime() / 1000,
        );
      }
    }
  };
  const retention = new PeriodicJob(runRetention, {
    intervalMs: config.retentionIntervalMs,
    onError: config.onError,
  });
  const outboxRetention = createOutboxRetention({
    databaseUrl: config.databaseUrl,
    policy: config.outboxRetention,
    intervalMs: config.retentionIntervalMs,
    metrics: config.metrics,
    service: PROCESS_SERVICE,
    onError: config.onError,
  });
  return {
    deps,
    client,
    caller,
    callerFor: (trace) => boundTo(trace).caller,
    contextFor: (trace) => ({ deps: boundTo(trace).deps }),
    worker,
    reconciler,
    dispatcher,
    retention,
    maintainPartitions: runRetention,
    outboxRetention: outboxRetention.job,
    pruneOutbox: outboxRetention.runOnce,
    async checkDatabaseSettings() {
      await warnIfAutovacuumOff(pool, config.log);
    },
    async close() {
      await retention.stop();
      await outboxRetention.close();
      await dispatcher.stop();
      await reconciler.stop();
      await worker.stop();
      await keyWatcher.close();
      await provider.adapter.close();
      await webhookEgress.close();
      await pool.end();
      await outboxPool.end();
      await maintenancePool.end();
      await orm.close(true);
      await authOrm.close(true);
    },
  };
}
