import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { HeaderMap, type ApolloServer } from '@apollo/server';
import { nodeHTTPRequestHandler } from '@trpc/server/adapters/node-http';
import type { ServiceContext } from '../../services/context.ts';
import type { GatewayMetrics } from './gateway.metrics.ts';
import type { AnyTRPCRouter } from '@trpc/server';
import type { ServiceCaller } from '../../services/router.ts';
import type { GatewayContext } from '../graphql/context.ts';
import type { Logger } from '../../lib/logging/logger.ts';
import { RequestTrace } from '../../lib/logging/request-trace.ts';
import { bearerToken, sameSecret } from './bearer.ts';
import { refuseWithoutToken } from './trpc-refusal.ts';
import { BodyTimeoutError, BodyTooLargeError, readBody } from './read-body.ts';
import { createRateLimits, type RateLimitOptions, type RateLimits } from './rate-limits.ts';
import { sendGraphQLError, sendJson, sendRetryLater } from './respond.ts';
import { GATEWAY_ERRORS } from '../gateway.errors.ts';
import { LIB_ERRORS } from '../../lib/errors.ts';
import { createTimedServer, type ServerTimeouts } from './server-timeouts.ts';
import { logClientErrors } from './client-errors.ts';
import { hopKeyWaitMs, KEY_WAIT_HEADER, preferredWaitSeconds } from './prefer-wait.ts';
import { idempotencyAttemptOf } from './idempotency-attempt.ts';
import { createTenantAuthenticator, type AuthenticatedTenant } from './tenant-authenticator.ts';
import { asksForExplorerPage } from '../explorer/explorer-request.ts';
import { EXPLORER_ASSET_PREFIX, type Explorer } from '../explorer/explorer-responses.ts';

/** The request headers Apollo Server reads, and so the only ones handed to it. */
const APOLLO_REQUEST_HEADERS = ['accept', 'content-type'] as const;

/** docs/api.md §1.4: a request body over 100 KB is refused with 413 before it is parsed. */
export const MAX_BODY_BYTES = 100 * 1024;

export interface GatewayServerOptions {
  apollo: ApolloServer<GatewayContext>;
  /** The internal services with the process-wide deps: authentication and readiness. */
  services: ServiceCaller;
  /** The internal services for one request: every procedure they call sees its trace. */
  servicesFor: (trace: RequestTrace) => ServiceCaller;
  /** The tRPC context of one request to /trpc. */
  serviceContext: (trace: RequestTrace) => ServiceContext;
  /** What /trpc serves: the routers of the services this process runs (servedRouter). */
  trpcRouter: AnyTRPCRouter;
  metrics: GatewayMetrics;
  /** The process's logger; each request writes through its own (RequestTrace.log). */
  log: Logger;
  internalToken: string;
  /** Where unexpected errors go, with the logger of the request they happened in. */
  reportError: (error: unknown, log: Logger) => void;
  /** INTERNAL_PORT is set: /trpc and /metrics move to a server of their own. */
  separateInternal: boolean;
  timeouts: ServerTimeouts;
  /** How long a GraphQL body may take once its headers are in (BODY_TIMEOUT_MS). */
  bodyTimeoutMs: number;
  /** MAX_CONNECTIONS: open connections per listening server; past it one is closed at accept. */
  maxConnections: number;
  /** The longest `Prefer: wait` honoured for a key in flight (keyWaitCapMs). */
  keyWaitCapMs: number;
  rateLimits: RateLimitOptions;
  /** EXPLORER: GraphiQL for browsers at GET /graphql, its files under /explorer/; null: off. */
  explorer: Explorer | null;
}

export interface GatewayServer {
  /** The public server: /graphql and health, and /trpc and /metrics unless `internal` exists. */
  server: Server;
  /** With INTERNAL_PORT: the only server of /trpc and /metrics (and health, for probes). */
  internal: Server | null;
  /**
   * Stops accepting on both servers, lets in-flight requests finish (up to `timeoutMs`), then
   * closes the rest.
   */
  drain(timeoutMs: number): Promise<void>;
}

/**
 * Which routes a server answers. `all`: GraphQL for merchants (and the explorer's files), /trpc
 * for internal callers (behind INTERNAL_TOKEN, checked before any routing), /metrics, /healthz
 * and /readyz. With INTERNAL_PORT, `public` keeps GraphQL and health, and `internal` has tRPC,
 * metrics and health: the internal procedures and the fleet's numbers never face the merchants'
 * network.
 */
type Surface = 'all' | 'public' | 'internal';

/** The gateway's HTTP server, or its two when INTERNAL_PORT is set, sharing one drain. */
export function createGatewayServer(options: GatewayServerOptions): GatewayServer {
  const opts: RouteOptions = {
    ...options,
    authenticate: createTenantAuthenticator((apiKey) =>
      options.services.tenants.authenticate({ apiKey }),
    ),
    limits: createRateLimits(options.rateLimits),
  };
  // Present from the start, at zero, so that the first refusal shows in a rate.
  for (const limit of ['tenant', 'unauthenticated'])
    options.metrics.rateLimited.inc({ service: 'gateway', limit }, 0);
  let inFlight = 0;
  let draining = false;
  let idle: (() => void) | null = null;
  /** Each socket's response in flight, for the refusal of a client error (client-errors.ts). */
  const answering = new WeakMap<Socket, ServerResponse>();

  const serve = (surface: Surface) => (req: IncomingMessage, res: ServerResponse) => {
    inFlight += 1;
    answering.set(req.socket, res);
    if (draining) res.setHeader('connection', 'close');
    const started = performance.now();
    const header = req.headers['x-request-id'];
    // Everything this request causes — resolvers, tRPC calls, provider calls — logs under its id.
    const trace = RequestTrace.start(opts.log, typeof header === 'string' ? header : undefined);
    res.setHeader('x-request-id', trace.requestId);
    const attempt = idempotencyAttemptOf(req.headers['idempotency-attempt']);
    // A request ends when its answer is gone (or its client is) and its work has settled, in
    // either order: a client that disconnects mid-payment does not stop the payment, so neither
    // the request's line nor the drain may take the disconnect for the end.
    let answeredMs: number | null = null;
    /** The connection closed before the whole answer was written: the client gave up. */
    let aborted = false;
    let routed = false;
    const ended = () => {
      if (answeredMs === null || !routed) return;
      inFlight -= 1;
      if (inFlight === 0) idle?.();
      if (req.url === '/metrics') return;
      // The request's one line at info: what it was, how it ended, and what it did.
      trace.log.info(
        {
          method: req.method,
          path: (req.url ?? '/').split('?')[0],
          status: res.statusCode,
          ...(attempt === undefined ? {} : { idempotencyAttempt: attempt }),
          ...(aborted ? { aborted: true } : {}),
          durationMs: Math.round(answeredMs),
          ...trace.summary(),
        },
        'request',
      );
    };
    res.on('close', () => {
      if (answering.get(req.socket) === res) answering.delete(req.socket);
      answeredMs = performance.now() - started;
      aborted = !res.writableFinished;
      ended();
    });
    void route(opts, { req, res, trace, surface })
      .catch((error: unknown) => {
        opts.reportError(error, trace.log);
        if (!res.headersSent) sendGraphQLError(res, LIB_ERRORS.INTERNAL_SERVER_ERROR);
        else res.destroy();
      })
      .finally(() => {
        routed = true;
        ended();
      });
  };

  const server = createTimedServer(
    serve(options.separateInternal ? 'public' : 'all'),
    options.timeouts,
    options.maxConnections,
  );
  const internal = options.separateInternal
    ? createTimedServer(serve('internal'), options.timeouts, options.maxConnections)
    : null;
  const servers = internal === null ? [server] : [server, internal];
  options.metrics.connectionsDropped.inc({ service: 'gateway' }, 0);
  for (const s of servers) {
    logClientErrors({ server: s, log: options.log, answering });
    // Counted, not logged: a flood would otherwise write a line per refused socket.
    s.on('drop', () => options.metrics.connectionsDropped.inc({ service: 'gateway' }));
  }
  return {
    server,
    internal,
    async drain(timeoutMs) {
      draining = true;
      const closed = Promise.all(
        servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))),
      );
      for (const s of servers) s.closeIdleConnections();
      if (inFlight > 0) {
        await Promise.race([
          new Promise<void>((resolve) => (idle = resolve)),
          new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref()),
        ]);
      }
      for (const s of servers) s.closeAllConnections();
      await closed;
    },
  };
}

interface RouteOptions extends GatewayServerOptions {
  authenticate: (apiKey: string) => Promise<AuthenticatedTenant | null>;
  limits: RateLimits;
}

interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  trace: RequestTrace;
  surface: Surface;
}

type Route = '/trpc' | '/graphql' | '/explorer' | '/metrics' | '/healthz' | '/readyz';

/** The route of a path, or null when `surface` does not serve it (404, as for any unknown path). */
function routeOf(pathname: string, surface: Surface): Route | null {
  const path =
    pathname === '/trpc' || pathname.startsWith('/trpc/')
      ? ('/trpc' as const)
      : pathname.startsWith(EXPLORER_ASSET_PREFIX)
        ? ('/explorer' as const)
        : pathname;
  switch (path) {
    case '/trpc':
    case '/metrics':
      return surface === 'public' ? null : path;
    case '/graphql':
    case '/explorer':
      return surface === 'internal' ? null : path;
    case '/healthz':
    case '/readyz':
      return path;
    default:
      return null;
  }
}

async function route(opts: RouteOptions, incoming: Omit<Exchange, 'url'>): Promise<void> {
  const { req, res } = incoming;
  const url = new URL(req.url ?? '/', 'http://gateway.invalid');
  const exchange = { ...incoming, url };
  switch (routeOf(url.pathname, incoming.surface)) {
    case '/trpc':
      return serveTrpc(opts, exchange);
    case '/graphql':
      // The page itself needs no key: it holds none, and asks for one (explorer-responses.ts).
      if (opts.explorer !== null && asksForExplorerPage(req.method, req.headers.accept))
        return opts.explorer.servePage(req, res);
      return serveGraphQL(opts, exchange);
    case '/explorer':
      if (opts.explorer === null)
        return sendJson(res, { status: 404, body: { error: 'not found' } });
      return opts.explorer.serveAsset(url.pathname.slice(EXPLORER_ASSET_PREFIX.length), req, res);
    case '/metrics': {
      const text = await opts.metrics.registry.metrics();
      res.writeHead(200, { 'content-type': opts.metrics.registry.contentType });
      res.end(text);
      return;
    }
    case '/healthz':
      return sendJson(res, { status: 200, body: { status: 'ok' } });
    case '/readyz': {
      const { ready } = await opts.services.system.ready();
      return sendJson(res, {
        status: ready ? 200 : 503,
        body: { status: ready ? 'ready' : 'not ready' },
      });
    }
    case null:
      return sendJson(res, { status: 404, body: { error: 'not found' } });
  }
}

async function serveTrpc(opts: RouteOptions, { req, res, url, trace }: Exchange): Promise<void> {
  const token = bearerToken(req.headers);
  if (token === null || !sameSecret(token, opts.internalToken))
    return refuseWithoutToken(res, opts.trpcRouter);
  // A gateway in another process granted its client this wait (Prefer: wait) for a key in flight.
  trace.keyWaitMs = hopKeyWaitMs(req.headers[KEY_WAIT_HEADER], opts.keyWaitCapMs);
  await nodeHTTPRequestHandler({
    router: opts.trpcRouter,
    req,
    res,
    path: url.pathname.replace(/^\/trpc\/?/, ''),
    maxBodySize: MAX_BODY_BYTES,
    createContext: () => opts.serviceContext(trace),
    onError: ({ error }) => {
      if (error.code === 'INTERNAL_SERVER_ERROR') opts.reportError(error, trace.log);
    },
  });
}

/**
 * On an answer sent before the body was read: the connection closes after it, so an unread body
 * (or one never sent) is not waited for, and cannot be taken for the next request.
 */
const BODY_UNREAD = { connection: 'close' } as const;

async function serveGraphQL(opts: RouteOptions, { req, res, url, trace }: Exchange): Promise<void> {
  // Authentication first, from the headers alone: a client without a valid key must not hold
  // a socket (and up to MAX_BODY_BYTES of buffer) while it trickles a body.
  // An address that has failed too often is refused before its key is looked up: guessing
  // keys must not reach the database. Requests in flight at once from one address are each
  // checked before any of them fails, so it may fail that many more times within a window.
  const address = req.socket.remoteAddress ?? 'unknown';
  const blockedSeconds = await opts.limits.unauthenticated(address);
  if (blockedSeconds !== null) {
    opts.metrics.rateLimited.inc({ service: 'gateway', limit: 'unauthenticated' });
    res.setHeader('connection', 'close');
    return sendRetryLater(res, GATEWAY_ERRORS.RATE_LIMITED, blockedSeconds);
  }
  const apiKey = bearerToken(req.headers);
  const tenant = apiKey === null ? null : await opts.authenticate(apiKey);
  if (tenant === null) {
    await opts.limits.failedAuthentication(address);
    return sendGraphQLError(res, GATEWAY_ERRORS.UNAUTHENTICATED, {
      'www-authenticate': 'Bearer',
      ...BODY_UNREAD,
    });
  }
  let raw: string;
  try {
    raw = await readBody(req, { maxBytes: MAX_BODY_BYTES, timeoutMs: opts.bodyTimeoutMs });
  } catch (error) {
    if (error instanceof BodyTooLargeError)
      return sendGraphQLError(res, GATEWAY_ERRORS.PAYLOAD_TOO_LARGE, BODY_UNREAD);
    // As Node answers a request not received within the request timeout (client-errors.ts):
    // nothing of it ran, so it may be sent again.
    if (error instanceof BodyTimeoutError) {
      res.writeHead(408, BODY_UNREAD).end();
      return;
    }
    throw error;
  }
  trace.annotate({ tenantId: tenant.id });
  const preferredWait = preferredWaitSeconds(req.headers['prefer']);
  if (preferredWait !== null && preferredWait > 0) {
    trace.keyWaitMs = Math.min(preferredWait * 1_000, opts.keyWaitCapMs);
    res.setHeader('preference-applied', `wait=${Math.floor(trace.keyWaitMs / 1_000)}`);
  }
  // Before anything of GraphQL runs; RATE_LIMITED is never stored, so the key stays new.
  const waitSeconds = await opts.limits.tenant(tenant.id);
  if (waitSeconds !== null) {
    opts.metrics.rateLimited.inc({ service: 'gateway', limit: 'tenant' });
    return sendRetryLater(res, GATEWAY_ERRORS.RATE_LIMITED, waitSeconds);
  }

  let body: unknown;
  if (req.method === 'POST') {
    try {
      body = raw.length === 0 ? undefined : JSON.parse(raw);
    } catch {
      return sendJson(res, {
        status: 400,
        body: {
          errors: [{ message: 'The body is not valid JSON.', extensions: { code: 'BAD_REQUEST' } }],
        },
      });
    }
  }
  // Only what Apollo reads, with CSRF prevention off (apollo.ts): the response's media type
  // from Accept, and a GET's content type. Authorization and the rest stay out of its reach.
  const headers = new HeaderMap();
  for (const name of APOLLO_REQUEST_HEADERS) {
    const value = req.headers[name];
    if (value !== undefined) headers.set(name, value);
  }
  const answer = await opts.apollo.executeHTTPGraphQLRequest({
    httpGraphQLRequest: { method: req.method ?? 'GET', headers, search: url.search, body },
    context: () =>
      Promise.resolve({
        tenantId: tenant.id,
        services: opts.servicesFor(trace),
        replayed: false,
        reportError: (error: unknown) => opts.reportError(error, trace.log),
      }),
  });
  for (const [name, value] of answer.headers) res.setHeader(name, value);
  res.statusCode = answer.status ?? 200;
  if (answer.body.kind === 'complete') {
    res.end(answer.body.string);
    return;
  }
  for await (const chunk of answer.body.asyncIterator) res.write(chunk);
  res.end();
}
