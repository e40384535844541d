import { pino, type DestinationStream, type Logger } from 'pino';
import { traceFieldsOf } from './request-trace.ts';
import { scrubSecrets } from './scrub-secrets.ts';

export type { Logger };

/**
 * JSON lines on stdout (or `destination`), with secret fields censored (`scrub-secrets.ts`). A
 * line written through a request's logger (RequestTrace.log) carries that request's id, tenant,
 * operation and key reference. One logger per process, made by whoever composes it.
 */
export function createLogger(opts: { level: string; destination?: DestinationStream }): Logger {
  return pino(
    {
      level: opts.level,
      base: { pid: process.pid },
      formatters: { log: scrubSecrets },
      mixin: (_line, _level, logger) => traceFieldsOf(logger),
    },
    opts.destination,
  );
}
