import { pino, type DestinationStream, type Logger } from 'pino';
import type { RequestContext } from './request-context.ts';
import { scrubSecrets } from './scrub-secrets.ts';

export type { Logger };

/**
 * JSON lines on stdout (or `destination`), each stamped with the current request's id, tenant,
 * operation and key reference, with secret fields censored (`scrub-secrets.ts`). One logger per
 * process, made by whoever composes it.
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
      formatters: { log: scrubSecrets },
      mixin: () => ({ ...opts.requestContext.current() }),
    },
    opts.destination,
  );
}
