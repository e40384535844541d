/**
 * Reads one HTTP answer as GraphQL over HTTP: data, or the error that decides what happens
 * next. Errors come in `errors[].extensions.code` with any HTTP status — OUTCOME_PENDING is a
 * 202 — so the status alone never means success.
 */
import { retryAfterMsOf } from './backoff.ts';
import { isRetryable, type CallKind } from './retry-policy.ts';

export interface GraphQLErrorBody {
  message?: unknown;
  extensions?: Record<string, unknown>;
}

interface GraphQLResponseBody {
  data?: Record<string, unknown> | null;
  errors?: GraphQLErrorBody[];
  extensions?: { idempotency?: { replayed?: unknown } };
}

/** What one attempt came to. */
export type AttemptResult =
  | { ok: true; httpStatus: number; data: Record<string, unknown>; replayed: boolean }
  | { ok: false; failure: AttemptFailure };

export interface AttemptFailure {
  code: string;
  message: string;
  /** Null when no answer arrived. */
  httpStatus: number | null;
  retryable: boolean;
  /** A stored refusal replayed for the key (extensions.idempotency.replayed). */
  replayed: boolean;
  retryAfterMs?: number;
  paymentId?: string;
  cause?: unknown;
}

export function readAnswer(input: {
  kind: CallKind;
  /** The root field the caller reads; its absence is a BAD_RESPONSE, not a success. */
  field: string | undefined;
  httpStatus: number;
  retryAfterHeader: string | null;
  text: string;
  nowMs: number;
}): AttemptResult {
  const { kind, httpStatus } = input;
  let body: GraphQLResponseBody;
  try {
    body = JSON.parse(input.text) as GraphQLResponseBody;
  } catch (cause) {
    return failed({ kind, code: 'BAD_RESPONSE', httpStatus, message: notGraphQL(input), cause });
  }
  if (typeof body !== 'object' || body === null) {
    return failed({ kind, code: 'BAD_RESPONSE', httpStatus, message: notGraphQL(input) });
  }
  const replayed = body.extensions?.idempotency?.replayed === true;
  const errors = Array.isArray(body.errors) ? body.errors : [];
  if (errors.length === 0) {
    if (typeof body.data !== 'object' || body.data === null) {
      return failed({ kind, code: 'BAD_RESPONSE', httpStatus, message: notGraphQL(input) });
    }
    const payload = input.field === undefined ? {} : body.data[input.field];
    // A query's field may be null (payment(id) of another tenant); a mutation's payload may not.
    if (payload === undefined || (kind === 'mutation' && payload === null)) {
      const message = `HTTP ${httpStatus}: no ${String(input.field)} in the answer`;
      return failed({ kind, code: 'BAD_RESPONSE', httpStatus, message });
    }
    return { ok: true, httpStatus, data: body.data, replayed };
  }
  // A document with several root fields may answer some and refuse others. Sending it again is
  // safe (each mutation field carries its own key), so one field not final yet retries the lot.
  const readings = errors.map((error) => {
    const code = typeof error.extensions?.['code'] === 'string' ? error.extensions['code'] : '';
    return { error, code, retryable: isRetryable({ kind, code, httpStatus }) };
  });
  const deciding = readings.find((r) => r.retryable) ?? readings[0];
  if (deciding === undefined) throw new Error('unreachable: errors is not empty');
  const { error, code } = deciding;
  const paymentId = error.extensions?.['paymentId'];
  const retryAfterMs = retryAfterMsOf({
    header: input.retryAfterHeader,
    extensionSeconds: error.extensions?.['retryAfterSeconds'],
    nowMs: input.nowMs,
  });
  return {
    ok: false,
    failure: {
      code: code === '' ? 'BAD_RESPONSE' : code,
      message: typeof error.message === 'string' ? error.message : `HTTP ${httpStatus}`,
      httpStatus,
      retryable: deciding.retryable,
      replayed,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      ...(typeof paymentId === 'string' ? { paymentId } : {}),
    },
  };
}

/** No answer at all: the connection failed, or the attempt or call ran out of time. */
export function lostAnswer(input: {
  kind: CallKind;
  code: 'NETWORK_ERROR' | 'TIMEOUT' | 'ABORTED';
  cause: unknown;
}): AttemptResult {
  const messages = {
    NETWORK_ERROR: 'The connection failed before an answer arrived; the request may have run.',
    TIMEOUT: 'No answer in time; the request may have run.',
    ABORTED: 'The call was aborted; the request may have run.',
  };
  return failed({
    kind: input.kind,
    code: input.code,
    httpStatus: null,
    message: messages[input.code],
    cause: input.cause,
  });
}

function failed(input: {
  kind: CallKind;
  code: string;
  httpStatus: number | null;
  message: string;
  cause?: unknown;
}): AttemptResult {
  const { kind, code, httpStatus } = input;
  return {
    ok: false,
    failure: {
      code,
      message: input.message,
      httpStatus,
      retryable: isRetryable({ kind, code, httpStatus }),
      replayed: false,
      ...(input.cause === undefined ? {} : { cause: input.cause }),
    },
  };
}

function notGraphQL(input: { httpStatus: number; text: string }): string {
  return `HTTP ${input.httpStatus} without a GraphQL answer: ${input.text.slice(0, 200)}`;
}
