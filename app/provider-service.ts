import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { nodeHTTPRequestHandler } from '@trpc/server/adapters/node-http';
import { bearerToken, sameSecret } from '../gateway/http/bearer.ts';
import { refuseWithoutToken } from '../gateway/http/trpc-refusal.ts';
import {
  createTimedServer,
  DEFAULT_MAX_CONNECTIONS,
  longestExchangeMs,
  socketIdleTimeoutMs,
} from '../gateway/http/server-timeouts.ts';
import type { LogFormat } from '../lib/logging/log-format.ts';
import { createLogger, type Logger } from '../lib/logging/logger.ts';
import { RequestTrace } from '../lib/logging/request-trace.ts';
import { createLibMetrics, createMetricsRegistry } from '../lib/metrics.ts';
import { createLedgerMetrics } from '../services/ledger/index.ts';
import {
  createHttpProviderAdapter,
  createProviderMetrics,
  providerServiceRouter,
} from '../services/provider/index.ts';
import type { ProviderDeps } from '../services/context.ts';

/** A provider call's input is a few hundred bytes; anything near this is not one. */
const MAX_BODY_BYTES = 64 * 1024;

export interface ProviderServiceOptions {
  pspUrl: string;
  /** INTERNAL_TOKEN: every call must carry it, as at the whole stack's /trpc. */
  internalToken: string;
  /** INTERNAL_HOST and INTERNAL_PORT (0: any free port). */
  host: string;
  port: number;
  providerTimeoutMs: number;
  providerMaxAttempts: number;
  logLevel: string;
  logDestination?: { write(line: string): void };
  logFormat?: LogFormat;
  /** How long a stop waits for calls in flight before it closes their connections. */
  drainTimeoutMs: number;
}

export interface ProviderService {
  /** The tRPC endpoint, as SERVICE_URLS gives it to the other processes. */
  url: string;
  /** Stops accepting, lets calls in flight finish (up to the drain timeout), then closes. */
  stop(): Promise<void>;
}

/**
 * The provider service in a process of its own (SERVICES=provider): its tRPC procedures behind
 * INTERNAL_TOKEN on INTERNAL_PORT, `/metrics` and `/healthz`. It owns the PSP adapter and holds
 * no database: every call carries its provider key, the payments service's lease decides what
 * follows a timeout, and the PSP's key makes a call sent twice take effect once.
 */
export async function startProviderService(
  options: ProviderServiceOptions,
): Promise<ProviderService> {
  const log = createLogger({
    level: options.logLevel,
    destination: options.logDestination,
    format: options.logFormat,
  });
  const registry = createMetricsRegistry({ defaultMetrics: true });
  const metrics = {
    ...createLibMetrics(registry),
    ...createProviderMetrics(registry),
    ...createLedgerMetrics(registry),
  };
  const providerAdapter = createHttpProviderAdapter(options.pspUrl);
  const deps: ProviderDeps = {
    metrics,
    log,
    trace: null,
    providerAdapter,
    config: {
      providerTimeoutMs: options.providerTimeoutMs,
      providerMaxAttempts: options.providerMaxAttempts,
    },
  };
  let inFlight = 0;
  let drained: (() => void) | null = null;
  const server = createTimedServer(
    (req, res) => {
      inFlight += 1;
      res.on('close', () => {
        inFlight -= 1;
        if (inFlight === 0) drained?.();
      });
      void serve({ req, res, deps, log, options, registry }).catch((error: unknown) => {
        log.error({ err: error }, 'unexpected error');
        if (!res.headersSent) res.writeHead(500).end();
        else res.destroy();
      });
    },
    {
      requestTimeoutMs: longestExchangeMs(options.providerTimeoutMs),
      socketIdleTimeoutMs: socketIdleTimeoutMs(options.providerTimeoutMs),
    },
    // Its callers are our own gateways, whose pools stay far below it.
    DEFAULT_MAX_CONNECTIONS,
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host}:${port}/trpc`,
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      if (inFlight > 0) {
        await Promise.race([
          new Promise<void>((resolve) => (drained = resolve)),
          new Promise<void>((resolve) => setTimeout(resolve, options.drainTimeoutMs).unref()),
        ]);
      }
      server.closeAllConnections();
      await closed;
      await providerAdapter.close();
    },
  };
}

async function serve(input: {
  req: IncomingMessage;
  res: ServerResponse;
  deps: ProviderDeps;
  log: Logger;
  options: ProviderServiceOptions;
  registry: ReturnType<typeof createMetricsRegistry>;
}): Promise<void> {
  const { req, res, deps, options, registry } = input;
  const path = new URL(req.url ?? '/', 'http://internal').pathname;
  if (path === '/healthz') {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    return;
  }
  const token = bearerToken(req.headers);
  const isTrpc = path === '/trpc' || path.startsWith('/trpc/');
  if (token === null || !sameSecret(token, options.internalToken)) {
    // Every path but /healthz needs the token; /trpc says so in tRPC's shape, for its clients.
    if (isTrpc) return refuseWithoutToken(res, providerServiceRouter);
    res
      .writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' })
      .end(
        JSON.stringify({ error: { code: 'UNAUTHENTICATED', message: 'internal token required' } }),
      );
    return;
  }
  if (path === '/metrics') {
    const text = await registry.metrics();
    res.writeHead(200, { 'content-type': registry.contentType }).end(text);
    return;
  }
  if (!isTrpc) {
    res.writeHead(404).end();
    return;
  }
  // The calling request's id, so the provider's log lines and PSP calls carry it.
  const header = req.headers['x-request-id'];
  const trace = RequestTrace.start(input.log, typeof header === 'string' ? header : undefined);
  res.setHeader('x-request-id', trace.requestId);
  await nodeHTTPRequestHandler({
    router: providerServiceRouter,
    req,
    res,
    path: path.replace(/^\/trpc\/?/, ''),
    maxBodySize: MAX_BODY_BYTES,
    createContext: () => ({ deps: { ...deps, log: trace.log, trace } }),
    onError: ({ error }) => {
      if (error.code === 'INTERNAL_SERVER_ERROR')
        trace.log.error({ err: error }, 'unexpected error');
    },
  });
}
