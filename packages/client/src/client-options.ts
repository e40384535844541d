/**
 * What createPaymentsClient takes, its defaults, and the checks that refuse options the SDK
 * cannot honour before anything is sent.
 */
import type { BackoffOptions } from './backoff.ts';
import type { AttemptReport, RetrySettings } from './call-with-retries.ts';
import type { KeyStore } from './key-store.ts';
import { invalidRequest } from './payments-api-error.ts';
import type { FetchLike } from './send-attempt.ts';

export interface PaymentsClientOptions {
  /** The gateway's GraphQL endpoint, e.g. http://127.0.0.1:4000/graphql. */
  url: string;
  /** The tenant's API key, sent as `Authorization: Bearer`. */
  apiKey: string;
  /** Requests per logical call, the first included. */
  maxAttempts?: number;
  /** The whole call, every attempt and wait included; no attempt starts or sleeps past it. */
  timeoutMs?: number;
  /** One attempt; an attempt without an answer by then counts as a lost answer and is retried. */
  attemptTimeoutMs?: number;
  /**
   * Sent on mutations as `Prefer: wait=N` (docs/api.md §1.3): a duplicate of a request in
   * flight may wait up to N seconds for its answer instead of an immediate 409. 0 sends none;
   * a gateway that does not implement it ignores it.
   */
  preferWaitSeconds?: number;
  /** Keeps each call's key under its `operationId`, so a restarted process resumes it. */
  keyStore?: KeyStore;
  /** Defaults to the platform's global fetch. */
  fetch?: FetchLike;
  backoff?: Partial<BackoffOptions>;
  /** The jitter's source, uniform in [0, 1): a seeded one replays a schedule in tests. */
  random?: () => number;
  /** Told after every attempt: for logs and metrics. An observer that throws is ignored. */
  onAttempt?: (report: AttemptReport) => void;
}

/** Per call: the client's limits may be narrowed or widened for one call. */
export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  maxAttempts?: number;
}

export interface MutationOptions extends CallOptions {
  /** The call's key; by default a new one per call (crypto.randomUUID), reused on every retry. */
  idempotencyKey?: string;
  /** With a keyStore: the name under which the key is kept until the call's final answer. */
  operationId?: string;
}

/**
 * A lost answer, OUTCOME_PENDING or IDEMPOTENCY_KEY_IN_USE usually settles within a few
 * retries; more attempts only add load against a gateway that is down.
 */
const DEFAULT_MAX_ATTEMPTS = 6;
/** Long enough for a few backoffs and one Retry-After of an unknown outcome (30 s). */
const DEFAULT_TIMEOUT_MS = 60_000;
/**
 * Longer than the gateway's own bound on a request (a provider timeout plus a probe, 10 s at
 * its defaults) plus the default `Prefer: wait`: a shorter one abandons answers on their way.
 */
const DEFAULT_ATTEMPT_TIMEOUT_MS = 20_000;
/** Most in-flight duplicates finish within a provider round trip; 5 s covers a slow one. */
const DEFAULT_PREFER_WAIT_SECONDS = 5;
/** RFC 7240 lets the server cap the wait; the gateway caps it at 10 s (docs/api.md §1.3). */
const MAX_PREFER_WAIT_SECONDS = 10;
/** First retry within 200 ms; no wait beyond 5 s unless the gateway asks for more. */
const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 200, capMs: 5_000 };

/** The client's settings, checked once; a call may override the limits (callSettings). */
export type ClientSettings = RetrySettings & { keyStore: KeyStore | undefined };

export function resolveClientOptions(options: PaymentsClientOptions): ClientSettings {
  const fetchImpl: FetchLike | undefined = options.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function') throw invalidRequest('no fetch: pass options.fetch');
  const backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
  if (!(backoff.baseMs >= 0 && backoff.capMs >= backoff.baseMs)) {
    throw invalidRequest('backoff: need 0 <= baseMs <= capMs');
  }
  const settings: ClientSettings = {
    url: checkedUrl(options.url),
    apiKey: checkedApiKey(options.apiKey),
    fetch: fetchImpl,
    maxAttempts: positiveInteger('maxAttempts', options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS),
    timeoutMs: positiveMs('timeoutMs', options.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    attemptTimeoutMs: positiveMs(
      'attemptTimeoutMs',
      options.attemptTimeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS,
    ),
    preferWaitSeconds: checkedWait(options.preferWaitSeconds ?? DEFAULT_PREFER_WAIT_SECONDS),
    backoff,
    random: options.random ?? Math.random,
    onAttempt: options.onAttempt,
    keyStore: options.keyStore,
  };
  return settings;
}

/** The settings of one call: the client's, with the call's own limits. */
export function callSettings(settings: ClientSettings, options: CallOptions = {}): RetrySettings {
  return {
    ...settings,
    maxAttempts:
      options.maxAttempts === undefined
        ? settings.maxAttempts
        : positiveInteger('maxAttempts', options.maxAttempts),
    timeoutMs:
      options.timeoutMs === undefined
        ? settings.timeoutMs
        : positiveMs('timeoutMs', options.timeoutMs),
  };
}

function checkedUrl(url: unknown): string {
  let parsed: URL;
  try {
    parsed = new URL(String(url));
  } catch (cause) {
    throw invalidRequest(`url is not a URL: ${String(url)}`, cause);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw invalidRequest(`url must be http or https: ${String(url)}`);
  }
  return parsed.href;
}

function checkedApiKey(apiKey: unknown): string {
  if (typeof apiKey !== 'string' || apiKey.trim() === '')
    throw invalidRequest('apiKey is required');
  return apiKey;
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw invalidRequest(`${name} must be an integer >= 1`);
  return value;
}

function positiveMs(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw invalidRequest(`${name} must be > 0 ms`);
  return value;
}

function checkedWait(seconds: number): number {
  if (!Number.isSafeInteger(seconds) || seconds < 0 || seconds > MAX_PREFER_WAIT_SECONDS) {
    throw invalidRequest(
      `preferWaitSeconds must be an integer from 0 to ${MAX_PREFER_WAIT_SECONDS}`,
    );
  }
  return seconds;
}
