// Maps method + path to a handler. Unknown paths get 404 and known paths with the wrong
// method get 405 (with Allow), both as JSON, so a misconfigured client fails loudly and
// parseably instead of hanging or choking on HTML.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ChargeRoutes } from './charge-routes.ts';
import { errorAnswer, sendJson } from './http-json.ts';
import type { OperationRoutes } from './operation-routes.ts';
import type { OperationKind } from './operation-types.ts';
import type { StatementRoute } from './statement-route.ts';

const BY_KEY_PREFIX = '/v1/charges/by-idempotency-key/';
const REFUND_BY_KEY_PREFIX = '/v1/refunds/by-idempotency-key/';
const SETTLEMENT_BY_KEY_PREFIX = {
  capture: '/v1/captures/by-idempotency-key/',
  void: '/v1/voids/by-idempotency-key/',
} as const;
const CHARGE_PREFIX = '/v1/charges/';

/** The charge id in /v1/charges/<id><suffix>, or undefined when the path has another shape.
 * The id is one non-empty segment, kept as sent: charge ids never need encoding. */
function chargeIdIn(pathname: string, suffix: string): string | undefined {
  if (!pathname.startsWith(CHARGE_PREFIX) || !pathname.endsWith(suffix)) return undefined;
  const id = pathname.slice(CHARGE_PREFIX.length, pathname.length - suffix.length);
  return id === '' || id.includes('/') ? undefined : id;
}

type Handler = (request: IncomingMessage, response: ServerResponse, url: URL) => Promise<void>;

/** A path that is `prefix` followed by a non-empty key. */
const keyedPath = (prefix: string) => (pathname: string) =>
  pathname.startsWith(prefix) && pathname.length > prefix.length;

interface Route {
  matches(pathname: string): boolean;
  handlers: Partial<Record<string, Handler>>;
}

export interface RouterHandlers {
  charges: ChargeRoutes;
  operations: OperationRoutes;
  statement: StatementRoute;
}

export function createRequestRouter(
  handlers: RouterHandlers,
): (request: IncomingMessage, response: ServerResponse) => Promise<void> {
  const { charges, operations, statement } = handlers;
  /** Found by the route's own matches(), so never actually the fallback. */
  const chargeIdOf = (url: URL, suffix: string): string => chargeIdIn(url.pathname, suffix) ?? '';
  /** POST /v1/charges/<id><suffix> runs the operation `kind` on that charge. */
  const operationRoute = (kind: OperationKind, suffix: string): Route => ({
    matches: (pathname) => chargeIdIn(pathname, suffix) !== undefined,
    handlers: {
      POST: (request, response, url) =>
        operations.operate({ kind, chargeId: chargeIdOf(url, suffix) }, request, response),
    },
  });
  const table: Route[] = [
    {
      matches: (pathname) => pathname === '/v1/health',
      handlers: {
        GET: (_request, response) => {
          sendJson(response, { status: 200, body: { ok: true } });
          return Promise.resolve();
        },
      },
    },
    {
      matches: (pathname) => pathname === '/v1/charges',
      handlers: {
        POST: (request, response) => charges.createCharge(request, response),
        GET: (_request, response, url) => charges.listByReference(url, response),
      },
    },
    {
      matches: (pathname) =>
        pathname.startsWith(BY_KEY_PREFIX) && pathname.length > BY_KEY_PREFIX.length,
      handlers: {
        GET: (_request, response, url) =>
          charges.getByIdempotencyKey(url.pathname.slice(BY_KEY_PREFIX.length), response),
      },
    },
    // After the by-key probe, so a probe for the key "capture" or "refunds" stays a probe.
    operationRoute('capture', '/capture'),
    operationRoute('void', '/void'),
    {
      ...operationRoute('refund', '/refunds'),
      handlers: {
        ...operationRoute('refund', '/refunds').handlers,
        GET: (_request, response, url) => {
          operations.listRefunds(chargeIdOf(url, '/refunds'), response);
          return Promise.resolve();
        },
      },
    },
    {
      matches: (pathname) =>
        pathname.startsWith(REFUND_BY_KEY_PREFIX) && pathname.length > REFUND_BY_KEY_PREFIX.length,
      handlers: {
        GET: (_request, response, url) => {
          const encodedKey = url.pathname.slice(REFUND_BY_KEY_PREFIX.length);
          operations.getRefundByIdempotencyKey(encodedKey, response);
          return Promise.resolve();
        },
      },
    },
    ...(['capture', 'void'] as const).map((kind): Route => ({
      matches: keyedPath(SETTLEMENT_BY_KEY_PREFIX[kind]),
      handlers: {
        GET: (_request, response, url) => {
          const encodedKey = url.pathname.slice(SETTLEMENT_BY_KEY_PREFIX[kind].length);
          operations.getSettlementByIdempotencyKey(kind, encodedKey, response);
          return Promise.resolve();
        },
      },
    })),
    {
      matches: (pathname) => pathname === '/v1/statement',
      handlers: {
        GET: (_request, response, url) => {
          statement(url, response);
          return Promise.resolve();
        },
      },
    },
  ];

  return async (request, response) => {
    // The path is kept percent-encoded here so a key containing "/" (sent as %2F) stays one segment.
    const url = new URL(request.url ?? '/', 'http://sandbox.invalid');
    const route = table.find((candidate) => candidate.matches(url.pathname));
    if (route === undefined) {
      sendJson(response, errorAnswer({ status: 404, code: 'NOT_FOUND' }));
      return;
    }
    const handler = route.handlers[request.method ?? ''];
    if (handler === undefined) {
      const notAllowed = errorAnswer({ status: 405, code: 'METHOD_NOT_ALLOWED' });
      const allow = Object.keys(route.handlers).join(', ');
      sendJson(response, { ...notAllowed, headers: { Allow: allow } });
      return;
    }
    await handler(request, response, url);
  };
}
