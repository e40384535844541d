/**
 * One HTTP attempt: POST the document, read the whole answer under the attempt's signal, and
 * say what it came to. A connection that fails — before the request left, or after the gateway
 * ran it and before its answer arrived — looks the same from here; both are NETWORK_ERROR, and
 * only the idempotency key makes sending it again safe.
 */
import { lostAnswer, readAnswer, type AttemptResult } from './read-answer.ts';
import type { CallKind } from './retry-policy.ts';

/** The part of `fetch` the SDK uses; the platform's global fetch is one. */
export type FetchLike = (
  url: string,
  init: { method: 'POST'; headers: Record<string, string>; body: string; signal: AbortSignal },
) => Promise<FetchResponseLike>;

export interface FetchResponseLike {
  status: number;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
}

export async function sendAttempt(input: {
  fetch: FetchLike;
  url: string;
  kind: CallKind;
  /** The root field the caller reads, if one (see readAnswer). */
  field: string | undefined;
  headers: Record<string, string>;
  body: string;
  /** Aborts at the attempt's timeout, the call's deadline or the caller's abort. */
  signal: AbortSignal;
  /** The caller's own signal, to tell its abort from a timeout. */
  callerSignal: AbortSignal | undefined;
}): Promise<AttemptResult> {
  const { kind } = input;
  try {
    const response = await input.fetch(input.url, {
      method: 'POST',
      headers: input.headers,
      body: input.body,
      signal: input.signal,
    });
    // The body is part of the answer: a reset while it streams is a lost answer too.
    const text = await response.text();
    return readAnswer({
      kind,
      field: input.field,
      httpStatus: response.status,
      retryAfterHeader: response.headers.get('retry-after'),
      text,
      nowMs: Date.now(),
    });
  } catch (cause) {
    if (input.callerSignal?.aborted === true) return lostAnswer({ kind, code: 'ABORTED', cause });
    if (input.signal.aborted) return lostAnswer({ kind, code: 'TIMEOUT', cause });
    return lostAnswer({ kind, code: 'NETWORK_ERROR', cause });
  }
}
