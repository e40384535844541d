import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DestinationStream } from 'pino';
import type { Keyring } from '../lib/crypto/keyring.ts';
import { FaultPoints } from '../lib/faults.ts';
import { defaultConfig } from './config.ts';
import type { LogFormat } from '../lib/logging/log-format.ts';
import { createLogger, type Logger } from '../lib/logging/logger.ts';
import { createLibMetrics, createMetricsRegistry } from '../lib/metrics.ts';
import type { ServiceMetrics } from '../services/context.ts';
import { createLedgerMetrics } from '../services/ledger/index.ts';
import {
  MANAGE_WEBHOOK_OPERATIONS,
  REGISTER_WEBHOOK_ENDPOINT,
} from '../services/notifications/index.ts';
import { RESUMABLE_OPERATIONS } from '../services/payments/index.ts';
import { createProviderMetrics } from '../services/provider/index.ts';
import {
  createGatewayMetrics,
  initialiseGatewaySeries,
  type GatewayMetrics,
} from '../gateway/http/gateway.metrics.ts';
import { createServices, type Services, type ServicesConfig } from './compose.ts';
import { servedRouter } from '../services/router.ts';
import type { RemoteService } from './service-over-http.ts';
import { SERVICE_NAMES, type ServiceName } from './topology.ts';
import { LATEST_MIGRATION } from '../migrations/migration-list.ts';
import { createApollo } from '../gateway/graphql/apollo.ts';
import { ERROR_CATALOG } from './error-catalog.ts';
import { createGatewayServer } from '../gateway/http/gateway-server.ts';
import {
  EMPTY_WEBHOOK_ALLOW_LIST,
  type WebhookAllowList,
} from '../services/notifications/index.ts';
import type { RateLimitOptions } from '../gateway/http/rate-limits.ts';
import {
  BODY_TIMEOUT_MS,
  longestExchangeMs,
  socketIdleTimeoutMs,
} from '../gateway/http/server-timeouts.ts';
import { keyWaitCapMs } from '../gateway/http/prefer-wait.ts';
import { openExplorer, type ExplorerStatus } from '../gateway/explorer/open-explorer.ts';
import { DEFAULT_OUTBOX_RETENTION } from '../lib/outbox/outbox-retention.ts';

/** Attempts per provider call for refusals that prove nothing happened (503/429). */
export const DEFAULT_PROVIDER_MAX_ATTEMPTS = 3;
/** Connections per process: the request path holds at most one at a time per request. */
const DEFAULT_POOL_MAX = 20;
/** SIGTERM waits this long for in-flight requests; a phase in progress finishes or is resumed. */
export const DRAIN_TIMEOUT_MS = 10_000;

export interface AppOptions {
  databaseUrl: string;
  /** The PSP's base URL: the provider service runs in this process. */
  pspUrl?: string;
  /**
   * SERVICE_URLS provider=…: the provider service runs in a process of its own, reached over
   * tRPC with `internalToken`; this process then needs no PSP.
   */
  providerServiceUrl?: string;
  /**
   * SERVICES: what this process runs (every service unless given), and so which background
   * jobs it runs, each with the service that owns its tables: the recovery worker, the
   * reconciliation and retention with payments, the outbox dispatcher with ledger and
   * notifications. Without the gateway there is no GraphQL server, only the internal one (its
   * /trpc, /metrics and health on INTERNAL_PORT).
   */
  runs?: ReadonlySet<ServiceName>;
  /** SERVICE_URLS but the provider's: the services this process calls in other processes. */
  serviceUrls?: ReadonlyMap<RemoteService, string>;
  internalToken: string;
  /**
   * DATA_ENCRYPTION_KEYS: required, never defaulted here, so no composition of the app can store
   * answers or secrets under a key nobody keeps (app/main.ts decides where keys come from).
   */
  keyring: Keyring;
  host?: string;
  port?: number;
  leaseMs: number;
  ttlSeconds: number;
  metadataRetentionSeconds?: number;
  answerMaxBytes?: number;
  partitionSeconds?: number;
  retentionIntervalMs?: number;
  /** OUTBOX_RETENTION_SECONDS: how long events, deliveries and inbox rows are kept. */
  outboxRetentionSeconds?: number;
  recoveryIntervalMs: number;
  reconciliationIntervalMs?: number;
  outboxIntervalMs?: number;
  outboxClaimLeaseMs?: number;
  unknownAfterAttempts?: number;
  providerApplyWindowMs?: number;
  backoffBaseMs?: number;
  providerTimeoutMs: number;
  providerMaxAttempts?: number;
  poolMax?: number;
  /**
   * Where webhooks may go beyond public hosts (config.ts decides it from WEBHOOK_ALLOWED_HOSTS
   * and embedded mode); empty unless given, so webhooks reach public addresses only.
   */
  webhookAllowList?: WebhookAllowList;
  /** WEBHOOK_ENDPOINTS_PER_TENANT. */
  webhookEndpointsPerTenant?: number;
  faults?: FaultPoints;
  /** pino level (LOG_LEVEL): info by default; 'silent' turns logging off. */
  logLevel?: string;
  /** Where log lines go: stdout unless given (tests collect them). */
  logDestination?: DestinationStream;
  /** `json` unless given: main.ts decides from LOG_FORMAT and whether stdout is a terminal. */
  logFormat?: LogFormat;
  /** Off in tests that drive recovery by hand. */
  startRecoveryWorker?: boolean;
  reportError?: (error: unknown) => void;
  // The edge (docs/api.md §1.3 and §1.4).
  /** Per-tenant and failed-authentication limits; all off unless set. */
  rateLimits?: RateLimitOptions;
  /** INTERNAL_PORT: when set, /trpc and /metrics are served only there (0: any free port). */
  internalPort?: number;
  /** INTERNAL_HOST: where the internal server listens; loopback unless told otherwise. */
  internalHost?: string;
  /** How long receiving one request may take; server-timeouts.ts has the default and why. */
  requestTimeoutMs?: number;
  /** How long a body may take once its headers are in; server-timeouts.ts has the default. */
  bodyTimeoutMs?: number;
  /** MAX_CONNECTIONS: open connections per listening server (config-schema.ts's default). */
  maxConnections?: number;
  /** PostgreSQL statement_timeout of the services' pool (db/pool.ts has the default and why). */
  statementTimeoutMs?: number;
  /** EXPLORER: GraphiQL for browsers at GET /graphql (on unless false). */
  explorer?: boolean;
  /**
   * The explorer bundle `npm run build` wrote (dist/explorer); left out, browsers get a 503
   * saying it is not built, as when the app is composed from source.
   */
  explorerBundleDir?: string;
}

export interface App {
  url: string;
  /** Where /trpc and /metrics are: the internal server's URL, or `url` without INTERNAL_PORT. */
  internalUrl: string;
  metrics: ServiceMetrics & GatewayMetrics;
  services: Services;
  faults: FaultPoints;
  explorer: ExplorerStatus;
  stop(): Promise<void>;
}

/** Attempts at the start-up maintenance run before the process serves anyway. */
const START_MAINTENANCE_ATTEMPTS = 5;
const START_MAINTENANCE_BACKOFF_MS = 500;

/**
 * A transient database error (a restart, a terminated backend) must not stop a gateway from
 * starting: retry a few times, then serve and leave it to the periodic job. Partitions are made
 * ahead (a day with daily partitions), so only a database without maintenance for that long, or
 * a TTL just raised by more than that, lacks one for today's keys.
 */
async function maintainPartitionsAtStart(
  services: Services,
  reportError: (error: unknown) => void,
): Promise<void> {
  for (let attempt = 1; attempt <= START_MAINTENANCE_ATTEMPTS; attempt++) {
    try {
      await services.maintainPartitions();
      return;
    } catch (error) {
      reportError(error);
      await new Promise((resolve) => setTimeout(resolve, START_MAINTENANCE_BACKOFF_MS * attempt));
    }
  }
}

/** Where this process's payments reach the provider service: here, or another process. */
function providerOf(options: AppOptions): ServicesConfig['provider'] {
  // Payments, the provider's one caller, runs elsewhere; so does the provider, or it is unused.
  if (
    !(options.runs?.has('payments') ?? true) &&
    options.pspUrl === undefined &&
    options.providerServiceUrl === undefined
  )
    return { runsHere: false, url: null };
  if (options.providerServiceUrl !== undefined) {
    if (options.pspUrl !== undefined)
      throw new Error('a PSP URL and a provider service URL: the provider runs in one place');
    return {
      runsHere: false,
      url: options.providerServiceUrl,
      internalToken: options.internalToken,
    };
  }
  if (options.pspUrl === undefined)
    throw new Error('neither a PSP URL nor a provider service URL: payments cannot reach a PSP');
  return { runsHere: true, pspUrl: options.pspUrl };
}

/** Listens on host:port (0: any free port) and answers the server's URL. */
async function listen(server: Server, at: { port: number; host: string }): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at.port, at.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return `http://${at.host}:${port}`;
}

/** Composes one gateway process: services, Apollo, the HTTP server and the recovery worker. */
export async function startApp(options: AppOptions): Promise<App> {
  // What an option left out means: the configuration schema's default, the one place it lives.
  const defaults = defaultConfig();
  const log = createLogger({
    level: options.logLevel ?? defaults.logLevel,
    destination: options.logDestination,
    format: options.logFormat,
  });
  // An error inside a request (or a worker resumption) is logged with that request's logger, so
  // its line carries the id; a test's collector sees it as well.
  const reportErrorIn = (error: unknown, where: Logger) => {
    where.error({ err: error }, 'unexpected error');
    options.reportError?.(error);
  };
  const reportError = (error: unknown, where?: Logger) => reportErrorIn(error, where ?? log);
  const faults = options.faults ?? new FaultPoints();
  const runs = options.runs ?? new Set(SERVICE_NAMES);
  // One registry; each part adds its own series to it here, where the process is composed.
  const registry = createMetricsRegistry({ defaultMetrics: true });
  const gatewayMetrics = createGatewayMetrics(registry);
  initialiseGatewaySeries(
    gatewayMetrics,
    [...RESUMABLE_OPERATIONS, REGISTER_WEBHOOK_ENDPOINT, ...MANAGE_WEBHOOK_OPERATIONS].map(
      (op) => op.publicName,
    ),
  );
  const metrics = {
    ...createLibMetrics(registry),
    ...createProviderMetrics(registry),
    ...createLedgerMetrics(registry),
    ...gatewayMetrics,
  };
  const services = createServices({
    databaseUrl: options.databaseUrl,
    provider: providerOf(options),
    elsewhere: { urls: options.serviceUrls ?? new Map(), internalToken: options.internalToken },
    poolMax: options.poolMax ?? DEFAULT_POOL_MAX,
    statementTimeoutMs: options.statementTimeoutMs,
    leaseMs: options.leaseMs,
    ttlSeconds: options.ttlSeconds,
    retention: {
      ttlSeconds: options.ttlSeconds,
      metadataRetentionSeconds:
        options.metadataRetentionSeconds ?? defaults.idempotencyMetadataRetentionSeconds,
      partitionSeconds: options.partitionSeconds ?? defaults.idempotencyPartitionSeconds,
    },
    retentionIntervalMs: options.retentionIntervalMs ?? defaults.retentionIntervalMs,
    outboxRetention: {
      ...DEFAULT_OUTBOX_RETENTION,
      retentionSeconds: options.outboxRetentionSeconds ?? defaults.outboxRetentionSeconds,
    },
    answerMaxBytes: options.answerMaxBytes ?? defaults.idempotencyResponseMaxBytes,
    recoveryIntervalMs: options.recoveryIntervalMs,
    reconciliationIntervalMs: options.reconciliationIntervalMs ?? defaults.reconciliationIntervalMs,
    outboxIntervalMs: options.outboxIntervalMs ?? defaults.outboxIntervalMs,
    outboxClaimLeaseMs: options.outboxClaimLeaseMs ?? defaults.outboxClaimLeaseMs,
    unknownAfterAttempts: options.unknownAfterAttempts ?? defaults.unknownAfterAttempts,
    providerApplyWindowMs: options.providerApplyWindowMs ?? defaults.providerApplyWindowMs,
    backoffBaseMs: options.backoffBaseMs ?? defaults.backoffBaseMs,
    providerTimeoutMs: options.providerTimeoutMs,
    providerMaxAttempts: options.providerMaxAttempts ?? DEFAULT_PROVIDER_MAX_ATTEMPTS,
    latestMigration: LATEST_MIGRATION,
    webhookAllowList: options.webhookAllowList ?? EMPTY_WEBHOOK_ALLOW_LIST,
    webhookEndpointsPerTenant:
      options.webhookEndpointsPerTenant ?? defaults.webhookEndpointsPerTenant,
    faults,
    metrics,
    keyring: options.keyring,
    log,
    onError: reportError,
  });
  // Partitions for today's keys must exist before the first request: a process that starts after
  // a long pause (or on a fresh database) creates them now rather than on its first schedule.
  await maintainPartitionsAtStart(services, reportError);
  // A warning, never a refusal to start: a transient error here must not keep the gateway down.
  await services.checkDatabaseSettings().catch(reportError);
  const apollo = await createApollo(metrics, ERROR_CATALOG);
  const explorer = await openExplorer({
    enabled: options.explorer ?? defaults.explorer,
    bundleDir: options.explorerBundleDir,
  });
  // A bundle that was given but fails its checks is a damaged build: say so once, at start.
  if (options.explorerBundleDir !== undefined && explorer.status.state === 'unavailable')
    log.warn({ reason: explorer.status.reason }, 'explorer not served');
  const gateway = createGatewayServer({
    apollo,
    services: services.caller,
    servicesFor: services.callerFor,
    serviceContext: services.contextFor,
    trpcRouter: servedRouter(runs),
    metrics,
    log,
    internalToken: options.internalToken,
    reportError: reportErrorIn,
    separateInternal: options.internalPort !== undefined,
    timeouts: {
      requestTimeoutMs: options.requestTimeoutMs ?? longestExchangeMs(options.providerTimeoutMs),
      socketIdleTimeoutMs: socketIdleTimeoutMs(options.providerTimeoutMs),
    },
    bodyTimeoutMs: options.bodyTimeoutMs ?? BODY_TIMEOUT_MS,
    maxConnections: options.maxConnections ?? defaults.maxConnections,
    rateLimits: options.rateLimits ?? {},
    keyWaitCapMs: keyWaitCapMs(options.providerTimeoutMs),
    explorer: explorer.explorer,
  });
  const runsGateway = runs.has('gateway');
  if (!runsGateway && gateway.internal === null)
    throw new Error('a process without the gateway serves only INTERNAL_PORT, which is not set');
  let url: string;
  let internalUrl: string;
  try {
    // Without the gateway the public server is never listened on: no GraphQL in this process.
    const publicUrl = runsGateway
      ? await listen(gateway.server, { port: options.port ?? 0, host: options.host ?? '127.0.0.1' })
      : null;
    internalUrl =
      gateway.internal === null
        ? publicUrl!
        : await listen(gateway.internal, {
            port: options.internalPort ?? 0,
            host: options.internalHost ?? '127.0.0.1',
          });
    url = publicUrl ?? internalUrl;
  } catch (error) {
    // A port in use: close what did start (the other server, the pool), so that the caller's
    // failure is the whole story and nothing keeps the process alive.
    await gateway.drain(0);
    await apollo.stop();
    await services.close();
    throw error;
  }
  // Each job runs with the service that owns its tables; each is safe with several processes
  // (leases, SKIP LOCKED claims, an advisory lock for retention).
  if (options.startRecoveryWorker ?? true) {
    if (runs.has('payments')) {
      services.worker.start();
      services.reconciler.start();
      services.retention.start();
    }
    if (runs.has('ledger')) {
      services.dispatcher.start();
      services.outboxRetention.start();
    }
  }
  return {
    url,
    internalUrl,
    metrics,
    services,
    faults,
    explorer: explorer.status,
    async stop() {
      await gateway.drain(DRAIN_TIMEOUT_MS);
      await apollo.stop();
      await services.close();
    },
  };
}
