/**
 * Time limits as abort signals: a call's deadline, each attempt's timeout, and sleeps that end
 * early when the call is aborted. Each limit clears its own timer and listeners when disposed,
 * so a finished call leaves nothing behind that keeps the process alive or leaks listeners
 * onto the caller's long-lived signal.
 */

/** Why a time limit fired, as the signal's reason: tells a timeout from the caller's abort. */
export class TimeLimitReachedError extends Error {
  override readonly name = 'TimeoutError';
}

export interface TimeLimit {
  signal: AbortSignal;
  dispose(): void;
}

/** Aborts after `ms`, or as soon as any of `parents` aborts (with that parent's reason). */
export function timeLimit(input: { ms: number; parents: readonly AbortSignal[] }): TimeLimit {
  const controller = new AbortController();
  const abortFrom = (parent: AbortSignal) => () => controller.abort(parent.reason);
  const listeners = input.parents.map((parent) => ({ parent, listener: abortFrom(parent) }));
  const timer = setTimeout(
    () => controller.abort(new TimeLimitReachedError(`no answer within ${input.ms} ms`)),
    Math.max(0, input.ms),
  );
  for (const { parent, listener } of listeners) {
    if (parent.aborted) controller.abort(parent.reason);
    else parent.addEventListener('abort', listener, { once: true });
  }
  return {
    signal: controller.signal,
    dispose() {
      clearTimeout(timer);
      for (const { parent, listener } of listeners) parent.removeEventListener('abort', listener);
    },
  };
}

/** Resolves after `ms`; rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
