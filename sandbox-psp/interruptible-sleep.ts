// Sleeps that end early when the server shuts down. A plain setTimeout would keep the process
// (and a test run) alive for up to the blackhole duration after close().
import { setTimeout as sleep } from 'node:timers/promises';

/** Resolves true when the time has passed, false when `signal` aborted first. */
export async function sleepFor(options: { ms: number; signal: AbortSignal }): Promise<boolean> {
  if (options.signal.aborted) return false;
  try {
    await sleep(Math.max(0, options.ms), undefined, { signal: options.signal });
    return true;
  } catch {
    return false;
  }
}

export function sleepUntil(options: { untilMs: number; signal: AbortSignal }): Promise<boolean> {
  return sleepFor({ ms: options.untilMs - Date.now(), signal: options.signal });
}
