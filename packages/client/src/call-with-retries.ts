/**
 * One logical call: attempts until a final answer, the attempts run out, or the call's time
 * does. Every attempt sends the same body — for a mutation, the same idempotency key — with
 * its own X-Request-Id and its number in Idempotency-Attempt.
 *
 * Failure modes this bounds: a gateway that never answers (each attempt has its own timeout),
 * a Retry-After longer than the caller's patience (the call ends at once rather than sleep past
 * its deadline), and a caller that gives up (its signal ends the attempt or the sleep at once).
 * When the outcome is not final the error says `retryable: true` and carries the key: the
 * caller may send the same call again later and get the one result.
 */
import { retryDelayMs, type BackoffOptions } from './backoff.ts';
import { PaymentsApiError } from './payments-api-error.ts';
import type { AttemptFailure, AttemptResult } from './read-answer.ts';
import type { CallKind } from './retry-policy.ts';
import { sendAttempt, type FetchLike } from './send-attempt.ts';
import { sleep, timeLimit, type TimeLimit } from './time-limits.ts';

/** What `onAttempt` is told after each attempt. */
export interface AttemptReport {
  operationName: string;
  /** 1 for the first request of the call. */
  attempt: number;
  requestId: string;
  idempotencyKey: string | undefined;
  /** `retrying`: another attempt follows after `delayMs`; `failed`: the call throws. */
  outcome: 'succeeded' | 'retrying' | 'failed';
  /** Null when no answer arrived. */
  httpStatus: number | null;
  /** Null on success; else the gateway's code or the SDK's (NETWORK_ERROR, TIMEOUT, ...). */
  code: string | null;
  /** The answer is the stored result of an earlier request with this key. */
  replayed: boolean;
  /** The payment the answer named, if it named one (OUTCOME_PENDING, IDEMPOTENCY_KEY_IN_USE). */
  paymentId: string | undefined;
  delayMs: number | undefined;
  durationMs: number;
}

export interface RetrySettings {
  url: string;
  apiKey: string;
  fetch: FetchLike;
  maxAttempts: number;
  timeoutMs: number;
  attemptTimeoutMs: number;
  /** Sent as `Prefer: wait=N` on mutations; 0 sends none. */
  preferWaitSeconds: number;
  backoff: BackoffOptions;
  random: () => number;
  onAttempt: ((report: AttemptReport) => void) | undefined;
}

export interface LogicalCall {
  kind: CallKind;
  operationName: string;
  /** The root field the caller reads: an answer without it is not a success. */
  field: string | undefined;
  /** The JSON request body, the same on every attempt. */
  body: string;
  idempotencyKey: string | undefined;
  signal: AbortSignal | undefined;
}

export interface CallAnswer {
  data: Record<string, unknown>;
  httpStatus: number;
  replayed: boolean;
}

/**
 * The gateway gets this much of an attempt's time to answer after the wait it was asked for:
 * a `Prefer: wait` as long as the attempt would have the answer arrive after the client left.
 */
const PREFER_WAIT_MARGIN_MS = 1_000;

export async function callWithRetries(
  call: LogicalCall,
  settings: RetrySettings,
): Promise<CallAnswer> {
  const deadlineAt = Date.now() + settings.timeoutMs;
  const deadline = timeLimit({ ms: settings.timeoutMs, parents: call.signal ? [call.signal] : [] });
  const progress: CallProgress = { requestIds: [], paymentId: undefined };
  try {
    let last: AttemptFailure = notStarted(call);
    for (let attempt = 1; attempt <= settings.maxAttempts; attempt++) {
      const remainingMs = deadlineAt - Date.now();
      if (remainingMs <= 0 || deadline.signal.aborted) break;
      const sent = await attemptOnce({ call, settings, attempt, remainingMs, deadline });
      progress.requestIds.push(sent.requestId);
      const { result } = sent;
      if (result.ok) {
        notify(settings, reportOf({ call, sent, outcome: 'succeeded' }));
        return { data: result.data, httpStatus: result.httpStatus, replayed: result.replayed };
      }
      last = result.failure;
      progress.paymentId = last.paymentId ?? progress.paymentId;
      const delayMs = retryDelayMs({ ...settings, attempt, retryAfterMs: last.retryAfterMs });
      // No sleep past the deadline: an answer that asks for a longer wait ends the call now,
      // with its outcome still open (retryable) and its key in the error.
      const outOfTime = Date.now() + delayMs >= deadlineAt;
      if (!last.retryable || attempt === settings.maxAttempts || outOfTime) {
        notify(settings, reportOf({ call, sent, outcome: 'failed' }));
        throw errorOf({ call, failure: last, progress });
      }
      notify(settings, reportOf({ call, sent, outcome: 'retrying', delayMs }));
      try {
        await sleep(delayMs, deadline.signal);
      } catch {
        break; // the caller aborted while waiting
      }
    }
    throw errorOf({ call, failure: endOfTime(call, last), progress });
  } finally {
    deadline.dispose();
  }
}

interface SentAttempt {
  attempt: number;
  requestId: string;
  result: AttemptResult;
  durationMs: number;
}

/** One attempt under its own timeout, cut short by the call's deadline or the caller. */
async function attemptOnce(input: {
  call: LogicalCall;
  settings: RetrySettings;
  attempt: number;
  remainingMs: number;
  deadline: TimeLimit;
}): Promise<SentAttempt> {
  const { call, settings, attempt } = input;
  const requestId = crypto.randomUUID();
  const attemptMs = Math.min(settings.attemptTimeoutMs, input.remainingMs);
  const began = Date.now();
  const limit = timeLimit({ ms: attemptMs, parents: [input.deadline.signal] });
  try {
    const result = await sendAttempt({
      fetch: settings.fetch,
      url: settings.url,
      kind: call.kind,
      field: call.field,
      headers: headersFor({ call, settings, attempt, requestId, attemptMs }),
      body: call.body,
      signal: limit.signal,
      callerSignal: call.signal,
    });
    return { attempt, requestId, result, durationMs: Date.now() - began };
  } finally {
    limit.dispose();
  }
}

function reportOf(input: {
  call: LogicalCall;
  sent: SentAttempt;
  outcome: AttemptReport['outcome'];
  delayMs?: number;
}): AttemptReport {
  const { call, sent } = input;
  const { result } = sent;
  return {
    operationName: call.operationName,
    attempt: sent.attempt,
    requestId: sent.requestId,
    idempotencyKey: call.idempotencyKey,
    outcome: input.outcome,
    httpStatus: result.ok ? result.httpStatus : result.failure.httpStatus,
    code: result.ok ? null : result.failure.code,
    replayed: result.ok ? result.replayed : result.failure.replayed,
    paymentId: result.ok ? undefined : result.failure.paymentId,
    delayMs: input.delayMs,
    durationMs: sent.durationMs,
  };
}

interface CallProgress {
  requestIds: string[];
  paymentId: string | undefined;
}

function headersFor(input: {
  call: LogicalCall;
  settings: RetrySettings;
  attempt: number;
  requestId: string;
  attemptMs: number;
}): Record<string, string> {
  const { call, settings } = input;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json',
    authorization: `Bearer ${settings.apiKey}`,
    'x-request-id': input.requestId,
    'idempotency-attempt': String(input.attempt),
  };
  if (call.kind === 'mutation') {
    const fits = Math.floor((input.attemptMs - PREFER_WAIT_MARGIN_MS) / 1000);
    const wait = Math.min(settings.preferWaitSeconds, fits);
    if (wait > 0) headers['prefer'] = `wait=${wait}`;
  }
  return headers;
}

/** An observer that throws must not change what the call does. */
function notify(settings: RetrySettings, report: AttemptReport): void {
  try {
    settings.onAttempt?.(report);
  } catch {
    // ignored on purpose, see above
  }
}

/** The failure to report when the call ends before its first attempt: nothing was sent. */
function notStarted(call: LogicalCall): AttemptFailure {
  return {
    code: call.signal?.aborted === true ? 'ABORTED' : 'TIMEOUT',
    message: 'The call ended before its first attempt: nothing was sent.',
    httpStatus: null,
    retryable: true,
    replayed: false,
  };
}

/** The caller's abort, or the call's time, ended it between attempts. */
function endOfTime(call: LogicalCall, last: AttemptFailure): AttemptFailure {
  if (call.signal?.aborted === true) {
    return { ...last, code: 'ABORTED', message: `Aborted by the caller after: ${last.message}` };
  }
  return last;
}

function errorOf(input: {
  call: LogicalCall;
  failure: AttemptFailure;
  progress: CallProgress;
}): PaymentsApiError {
  const { call, failure, progress } = input;
  const attempts = progress.requestIds.length;
  // Whether the outcome is still open, for the caller: an abort or a retryable failure that ran
  // out of attempts or time leaves the request possibly run, and its key worth keeping.
  const retryable = failure.retryable || failure.code === 'ABORTED';
  const gaveUp = retryable && attempts > 0 ? ` (not final after ${attempts} attempts)` : '';
  return new PaymentsApiError({
    code: failure.code,
    message: `${call.operationName}: ${failure.message}${gaveUp}`,
    httpStatus: failure.httpStatus,
    retryable,
    attempts,
    requestIds: progress.requestIds,
    ...(call.idempotencyKey === undefined ? {} : { idempotencyKey: call.idempotencyKey }),
    ...(progress.paymentId === undefined ? {} : { paymentId: progress.paymentId }),
    ...(failure.retryAfterMs === undefined
      ? {}
      : { retryAfterSeconds: Math.ceil(failure.retryAfterMs / 1000) }),
    cause: failure.cause,
  });
}
