import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { HeaderMap, type ApolloServer } from '@apollo/server';
import { nodeHTTPRequestHandler } from '@trpc/server/adapters/node-http';
import type { ServiceContext } from '../../services/context.ts';
import type { Metrics } from '../../services/kernel/metrics.ts';
import { appRouter, type ServiceCaller } from '../../services/router.ts';
import type { GatewayContext } from '../graphql/context.ts';
import type { Logger } from '../../services/kernel/logging/logger.ts';
import { RequestTrace } from '../../services/kernel/logging/request-trace.ts';
import { bearerToken, sameSecret } from './bearer.ts';
import { BodyTooLargeError, readBody } from './read-body.ts';
import { sendGraphQLError, sendJson } from './respond.ts';
import { createTenantAuthenticator, type AuthenticatedTenant } from './tenant-authenticator.ts';

/** CONTRACT §1: a request body over 100 KB is refused with 413 before it is parsed. */
export const MAX_BODY_BYTES = 100 * 1024;

export interface GatewayServerOptions {
  apollo: ApolloServer<GatewayContext>;
  /** The internal services with the process-wide deps: authentication and readiness. */
  services: ServiceCaller;
  /** The internal services for one request: every procedure they call sees its trace. */
  servicesFor: (trace: RequestTrace) => ServiceCaller;
  /** The tRPC context of one request to /trpc. */
  serviceContext: (trace: RequestTrace) => ServiceContext;
  metrics: Metrics;
  /** The process's logger; each request writes through its own (RequestTrace.log). */
  log: Logger;
  internalToken: string;
  /** Where unexpected errors go, with the logger of the request they happened in. */
  reportError: (error: unknown, log: Logger) => void;
}

export interface GatewayServer {
  server: Server;
  /** Stops accepting, lets in-flight requests finish (up to `timeoutMs`), then closes the rest. */
  drain(timeoutMs: number): Promise<void>;
}

/**
 * The gateway's one HTTP server: GraphQL for merchants, /trpc for internal callers (behind
 * INTERNAL_TOKEN, checked before any routing), /metrics, /healthz and /readyz.
 */
export function createGatewayServer(options: GatewayServerOptions): GatewayServer {
  const opts: RouteOptions = {
    ...options,
    authenticate: createTenantAuthenticator((apiKey) =>
      options.services.tenants.authenticate({ apiKey }),
    ),
  };
  let inFlight = 0;
  let draining = false;
  let idle: (() => void) | null = null;

  const server = createServer((req, res) => {
    inFlight += 1;
    if (draining) res.setHeader('connection', 'close');
    const started = performance.now();
    const header = req.headers['x-request-id'];
    // Everything this request causes — resolvers, tRPC calls, provider calls — logs under its id.
    const trace = RequestTrace.start(opts.log, typeof header === 'string' ? header : undefined);
    res.setHeader('x-request-id', trace.requestId);
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
          ...(aborted ? { aborted: true } : {}),
          durationMs: Math.round(answeredMs),
          ...trace.summary(),
        },
        'request',
      );
    };
    res.on('close', () => {
      answeredMs = performance.now() - started;
      aborted = !res.writableFinished;
      ended();
    });
    void route(opts, { req, res, trace })
      .catch((error: unknown) => {
        opts.reportError(error, trace.log);
        if (!res.headersSent) sendGraphQLError(res, 'INTERNAL_SERVER_ERROR');
        else res.destroy();
      })
      .finally(() => {
        routed = true;
        ended();
      });
  });

  return {
    server,
    async drain(timeoutMs) {
      draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      if (inFlight > 0) {
        await Promise.race([
          new Promise<void>((resolve) => (idle = resolve)),
          new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref()),
        ]);
      }
      server.closeAllConnections();
      await closed;
    },
  };
}

interface RouteOptions extends GatewayServerOptions {
  authenticate: (apiKey: string) => Promise<AuthenticatedTenant | null>;
}

interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  trace: RequestTrace;
}

async function route(opts: RouteOptions, incoming: Omit<Exchange, 'url'>): Promise<void> {
  const { req, res } = incoming;
  const url = new URL(req.url ?? '/', 'http://gateway.invalid');
  const exchange = { ...incoming, url };
  if (url.pathname === '/trpc' || url.pathname.startsWith('/trpc/'))
    return serveTrpc(opts, exchange);
  switch (url.pathname) {
    case '/graphql':
      return serveGraphQL(opts, exchange);
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
    default:
      return sendJson(res, { status: 404, body: { error: 'not found' } });
  }
}

async function serveTrpc(opts: RouteOptions, { req, res, url, trace }: Exchange): Promise<void> {
  const token = bearerToken(req.headers);
  if (token === null || !sameSecret(token, opts.internalToken)) {
    return sendJson(res, {
      status: 401,
      body: { error: { code: 'UNAUTHENTICATED', message: 'internal token required' } },
      headers: { 'www-authenticate': 'Bearer' },
    });
  }
  await nodeHTTPRequestHandler({
    router: appRouter,
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

async function serveGraphQL(opts: RouteOptions, { req, res, url, trace }: Exchange): Promise<void> {
  let raw: string;
  try {
    raw = await readBody(req, MAX_BODY_BYTES);
  } catch (error) {
    if (error instanceof BodyTooLargeError)
      return sendGraphQLError(res, 'PAYLOAD_TOO_LARGE', { connection: 'close' });
    throw error;
  }
  const apiKey = bearerToken(req.headers);
  const tenant = apiKey === null ? null : await opts.authenticate(apiKey);
  if (tenant === null)
    return sendGraphQLError(res, 'UNAUTHENTICATED', { 'www-authenticate': 'Bearer' });
  trace.annotate({ tenantId: tenant.id });

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
  const headers = new HeaderMap();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
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
