import type { ServerResponse } from 'node:http';
import { ERROR_CATALOG, type ErrorCode } from '../../services/kernel/errors.ts';

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** A request refused before GraphQL ran, in GraphQL's error shape so clients parse one format. */
export function sendGraphQLError(
  res: ServerResponse,
  code: ErrorCode,
  headers: Record<string, string> = {},
): void {
  const { httpStatus, message } = ERROR_CATALOG[code];
  sendJson(res, httpStatus, { errors: [{ message, extensions: { code } }] }, headers);
}
