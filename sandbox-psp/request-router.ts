// Maps method + path to a handler. Unknown paths get 404 and known paths with the wrong
// method get 405 (with Allow), both as JSON, so a misconfigured client fails loudly and
// parseably instead of hanging or choking on HTML.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ChargeRoutes } from './charge-routes.ts';
import { errorAnswer, sendJson } from './http-json.ts';
import type { StatementRoute } from './statement-route.ts';

const BY_KEY_PREFIX = '/v1/charges/by-idempotency-key/';

type Handler = (request: IncomingMessage, response: ServerResponse, url: URL) => Promise<void>;

interface Route {
  matches(pathname: string): boolean;
  handlers: Partial<Record<string, Handler>>;
}

export interface RouterHandlers {
  charges: ChargeRoutes;
  statement: StatementRoute;
}

export function createRequestRouter(
  handlers: RouterHandlers,
): (request: IncomingMessage, response: ServerResponse) => Promise<void> {
  const { charges, statement } = handlers;
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
