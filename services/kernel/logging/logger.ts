import { pino, type DestinationStream, type Logger } from 'pino';
import type { RequestContext } from './request-context.ts';

export type { Logger };

/**
 * Fields that may carry a secret or a client's raw key, wherever they appear in a log object.
 * Log code names them deliberately (keyRef, tenantId), so these paths are the safety net for a
 * whole input or headers object logged by mistake.
 */
const REDACTED_PATHS = [
  'apiKey',
  'authorization',
  'idempotencyKey',
  'paymentMethod',
  'secret',
  '*.apiKey',
  '*.authorization',
  '*.idempotencyKey',
  '*.paymentMethod',
  '*.secret',
  'headers.authorization',
  'req.headers.authorization',
];

/**
 * JSON lines on stdout (or `destination`), each stamped with the current request's id, tenant,
 * operation and key reference. One logger per process, made by whoever composes it.
 */
export function createLogger(opts: {
  level: string;
  requestContext: RequestContext;
  destination?: DestinationStream;
}): Logger {
  return pino(
    {
      level: opts.level,
      base: { pid: process.pid },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      mixin: () => ({ ...opts.requestContext.current() }),
    },
    opts.destination,
  );
}
