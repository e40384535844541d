/**
 * Waits for a condition instead of sleeping for a guess: polls `condition` until it returns a
 * value other than undefined, null or false, and returns that value. Bounded: after `timeoutMs`
 * it fails naming `what` and the last thing it saw (the last value, or the last error thrown),
 * so a test that times out says which condition never held.
 */
export interface WaitOptions {
  timeoutMs: number;
  /**
   * What is awaited, as a failure message reads it ("the worker to finish k-1"); a function is
   * called only on failure, for details known then (a child process's output).
   */
  what: string | (() => string);
  /** Between two polls; the default keeps a poll of the database cheap. */
  intervalMs?: number;
}

/** Short enough not to slow a test down, long enough not to hammer the database or a server. */
const DEFAULT_POLL_INTERVAL_MS = 50;

export class WaitTimedOutError extends Error {
  override readonly name = 'WaitTimedOutError';
}

type Falsy = undefined | null | false;

export async function waitUntil<T>(
  condition: () => Promise<T | Falsy> | T | Falsy,
  options: WaitOptions,
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let last: string = 'nothing yet';
  for (;;) {
    try {
      const value = await condition();
      if (value !== undefined && value !== null && value !== false) return value;
      last = `last saw ${JSON.stringify(value)}`;
    } catch (error) {
      last = `last error: ${error instanceof Error ? error.message : String(error)}`;
    }
    if (Date.now() >= deadline) {
      throw new WaitTimedOutError(
        `timed out after ${options.timeoutMs} ms waiting for ${typeof options.what === 'string' ? options.what : options.what()} (${last})`,
      );
    }
    await new Promise((resolve) =>
      setTimeout(resolve, options.intervalMs ?? DEFAULT_POLL_INTERVAL_MS),
    );
  }
}
