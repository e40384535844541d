import { pino, type DestinationStream, type Logger } from 'pino';
import pinoPretty from 'pino-pretty';
import type { LogFormat } from './log-format.ts';
import { traceFieldsOf } from './request-trace.ts';
import { scrubSecrets } from './scrub-secrets.ts';

export type { Logger };

/**
 * JSON lines on stdout (or `destination`), with secret fields censored (`scrub-secrets.ts`). A
 * line written through a request's logger (RequestTrace.log) carries that request's id, tenant,
 * operation and key reference. One logger per process, made by whoever composes it.
 *
 * Both formats write each line synchronously (ADR 0007: a line is out when the call returns, so a
 * SIGKILL loses none). pino's own default stream is asynchronous: it holds every line behind the
 * write in flight, and a kill takes them. A worker transport would lose the lines queued to it.
 * Censoring happens before either format.
 */
export function createLogger(opts: {
  level: string;
  destination?: DestinationStream;
  format?: LogFormat;
}): Logger {
  const destination =
    opts.format === 'pretty'
      ? pinoPretty({
          sync: true,
          destination: opts.destination ?? 1,
          // One line per request stays one line; pid and host say nothing at a terminal.
          singleLine: true,
          ignore: 'pid,hostname',
          translateTime: 'SYS:HH:MM:ss.l',
        })
      : (opts.destination ?? pino.destination({ dest: 1, sync: true }));
  return pino(
    {
      level: opts.level,
      base: { pid: process.pid },
      formatters: { log: scrubSecrets },
      mixin: (_line, _level, logger) => traceFieldsOf(logger),
    },
    destination,
  );
}
