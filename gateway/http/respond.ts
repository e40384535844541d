import type { ServerResponse } from 'node:http';
import type { ErrorSpec } from '../../lib/errors.ts';

export interface JsonAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export function sendJson(res: ServerResponse, answer: JsonAnswer): void {
  const text = JSON.stringify(answer.body);
  res.writeHead(answer.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...answer.headers,
  });
  res.end(text);
}

/** A request refused before GraphQL ran, in GraphQL's error shape so clients parse one format. */
export function sendGraphQLError(
  res: ServerResponse,
  { code, httpStatus, message }: ErrorSpec,
  headers: Record<string, string> = {},
): void {
  sendJson(res, {
    status: httpStatus,
    body: { errors: [{ message, extensions: { code } }] },
    headers,
  });
}

/**
 * A refusal that the client should retry after a while (RATE_LIMITED): the wait as whole
 * seconds in Retry-After and in `extensions.retryAfterSeconds`, as the resolvers answer
 * IDEMPOTENCY_KEY_IN_USE, so one client-side rule handles both.
 */
export function sendRetryLater(
  res: ServerResponse,
  { code, httpStatus, message }: ErrorSpec,
  retryAfterSeconds: number,
): void {
  sendJson(res, {
    status: httpStatus,
    body: { errors: [{ message, extensions: { code, retryAfterSeconds } }] },
    headers: { 'retry-after': String(retryAfterSeconds) },
  });
}
