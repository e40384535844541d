import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';

/**
 * What one request is about, for its log lines. Filled in as it becomes known: the request id
 * at the edge, the tenant after authentication, the operation and key reference at admission.
 * Never the raw idempotency key, API key or payment method.
 */
export interface RequestFields {
  requestId: string;
  tenantId?: string;
  operation?: string;
  /** A short hash of (tenant, operation, key): correlates one key's lines without revealing it. */
  keyRef?: string;
}

/**
 * What a request did, in order, for its one summary line: each admission's outcome (a document
 * may hold several commands), each recovery point it committed, each provider call's outcome.
 */
export interface RequestSteps {
  /** Each with the command's operation and key reference: a document may hold several. */
  admissions: Array<{ operation?: string; keyRef?: string; outcome: string }>;
  phases: string[];
  providerCalls: string[];
}

/** A step as the engine and the provider service report it (`logStep`). */
export type Step =
  | { msg: 'admission'; operation?: string; outcome: string }
  | { msg: 'phase committed'; recoveryPoint: string; fencingToken: string }
  | { msg: 'provider call'; call: string; outcome: string };

/** A request id we accept from a caller; anything else is replaced by one of our own. */
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** Where a request's logger keeps its trace, for the logger's mixin (logger.ts). */
const TRACE = Symbol('requestTrace');

/**
 * One request as its logs and downstream calls know it: made at the edge (an HTTP request, a
 * recovery-worker resumption) and handed down explicitly, in the tRPC context and the engine's
 * deps. Every line written through `log` carries the fields known when it is written, and
 * `requestId` goes to the provider as X-Request-Id.
 *
 * Why not AsyncLocalStorage: on Node 20 it works through async_hooks' promise hooks, which run
 * on every promise the process makes, logging or not (see
 * docs/decisions/0010-request-traces-passed-explicitly.md).
 */
export class RequestTrace {
  readonly log: Logger;
  private readonly fields: RequestFields;
  private readonly steps: RequestSteps = { admissions: [], phases: [], providerCalls: [] };
  /**
   * How long the client will wait for a key in flight to settle (`Prefer: wait`), in ms; 0
   * answers IDEMPOTENCY_KEY_IN_USE at once. Set at the edge; never part of the command.
   */
  keyWaitMs = 0;

  private constructor(base: Logger, requestId: string) {
    this.fields = { requestId };
    // A child per request, so the mixin can find this trace on the logger a line is written to.
    this.log = base.child({});
    (this.log as Logger & { [TRACE]?: RequestTrace })[TRACE] = this;
  }

  /** A trace for request `requestId` (the caller's, if well-formed; else a fresh one). */
  static start(base: Logger, requestId: string | undefined): RequestTrace {
    const id =
      requestId !== undefined && REQUEST_ID_PATTERN.test(requestId) ? requestId : randomUUID();
    return new RequestTrace(base, id);
  }

  get requestId(): string {
    return this.fields.requestId;
  }

  /** Adds what has become known about the request; later lines carry it. */
  annotate(fields: Omit<Partial<RequestFields>, 'requestId'>): void {
    Object.assign(this.fields, fields);
  }

  /** Notes a step for the summary line. */
  record(step: Step): void {
    switch (step.msg) {
      case 'admission': {
        // Admission annotated the trace with this command's scope just before (mutations run
        // one after another), unless the key was refused before it had one.
        const operation = step.operation ?? this.fields.operation;
        const keyRef = step.operation === undefined ? this.fields.keyRef : undefined;
        this.steps.admissions.push({
          ...(operation === undefined ? {} : { operation }),
          ...(keyRef === undefined ? {} : { keyRef }),
          outcome: step.outcome,
        });
        return;
      }
      case 'phase committed':
        this.steps.phases.push(step.recoveryPoint);
        return;
      case 'provider call':
        this.steps.providerCalls.push(step.outcome);
        return;
    }
  }

  /** The steps so far, for the request's summary line (the gateway's `request`). */
  summary(): RequestSteps {
    return this.steps;
  }

  /** A copy of the fields, for one log line (pino merges the line's own fields into it). */
  snapshot(): RequestFields {
    return { ...this.fields };
  }
}

/** The fields of the request a logger writes for, or none (a process-wide logger). */
export function traceFieldsOf(logger: Logger): RequestFields | Record<string, never> {
  return (logger as Logger & { [TRACE]?: RequestTrace })[TRACE]?.snapshot() ?? {};
}

/**
 * One step of some work. Work for a request is summed up in the request's one line at the end
 * (RequestTrace.summary), so its steps are only noted there and written at debug level: every
 * line costs CPU to build and a write (see
 * docs/decisions/0007-synchronous-logs-one-line-per-request.md). Work with no request (a
 * background job's, or the process-wide engine's) has no summary line, so its steps are written
 * at info.
 */
export function logStep(where: { log: Logger; trace: RequestTrace | null }, step: Step): void {
  const { msg, ...fields } = step;
  if (where.trace === null) {
    where.log.info(fields, msg);
    return;
  }
  where.trace.record(step);
  where.log.debug(fields, msg);
}
