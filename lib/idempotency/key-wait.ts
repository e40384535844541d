import { MARK_WAITING } from './idempotency.sql.ts';
import type { WakeReason } from './key-watcher.ts';
import type { KeyWaitOutcome } from '../metrics.ts';
import type { Admission } from './admission.ts';
import type { EngineDeps, KeyRow, Scope } from './types.ts';

/**
 * Waits, up to `remainingMs`, for the key in flight to leave its owner's hands: subscribed
 * and listening before the row is marked, so the owner's transition wakes us whenever it
 * commits. `notified` and `recheck` mean read the row again; so does a lease that ran out
 * (its owner died, and nobody's transition will wake us). Getting ready to wait counts against
 * `remainingMs` too: a database that does not answer makes it `unavailable`, never a longer wait.
 */
export async function waitForKey(
  deps: Pick<EngineDeps, 'pool' | 'keyWatcher' | 'log'>,
  wait: { scope: Scope; row: KeyRow; remainingMs: number },
): Promise<WakeReason | 'unavailable'> {
  const { scope, row, remainingMs } = wait;
  const watcher = deps.keyWatcher;
  if (watcher === null) return 'unavailable';
  const subscription = watcher.subscribe(row.id);
  const deadline = Date.now() + remainingMs;
  // What getting ready had reached when the wait ran out: LISTEN not in effect yet (the
  // database did not answer), or the mark on its way (an ordinary round trip, late).
  let stage: 'listening' | 'marking' | 'gave up' = 'listening';
  try {
    const marked = await within(
      remainingMs,
      watcher.listening().then(() => {
        // A waiter that has left marks nothing: a late mark would make the owner's next
        // transition notify nobody.
        if (stage === 'gave up') return null;
        stage = 'marking';
        return deps.pool.query(MARK_WAITING, [
          scope.tenantId,
          row.operation,
          scope.key,
          row.id,
          row.fencing_token,
        ]);
      }),
    );
    if (marked === 'timeout' || marked === null) {
      const listening = stage === 'listening';
      stage = 'gave up';
      if (!listening) return 'timeout';
      deps.log.warn({ msg: 'cannot wait for a key in flight: the database did not answer' });
      return 'unavailable';
    }
    if (marked.rowCount === 0) return 'recheck'; // it moved on since we read it
    const leftMs = Math.max(0, deadline - Date.now());
    const leaseMs = Math.max(0, (row.lease_remaining_seconds ?? 0) * 1_000);
    const ms = Math.min(leftMs, leaseMs);
    const woke = await subscription.next(ms);
    return woke === 'timeout' && ms < leftMs ? 'recheck' : woke;
  } catch (error) {
    // No listening connection (the database is unreachable now): answer as if no wait had
    // been asked for. A wait is a preference; it never turns a 409 into a 500.
    deps.log.warn({ msg: 'cannot wait for a key in flight', err: error });
    return 'unavailable';
  } finally {
    subscription.cancel();
  }
}

/** How a wait ended, by what admission decided once the key left its owner's hands. */
export function waitOutcome(admission: Admission): KeyWaitOutcome {
  switch (admission.kind) {
    case 'replay':
    case 'decided':
      return 'replayed';
    case 'owned':
      return 'took_over';
    case 'unknown':
      return 'unknown';
    case 'in_use': // the row kept changing under admission
      return 'timed_out';
    case 'reused': // the key's window ended and another command took it meanwhile
      return 'unknown';
  }
}

/**
 * `work`'s result, or `timeout` once `ms` have passed. The work is not stopped: it settles on
 * its own (a LISTEN that comes up serves later waiters), and its failure after the timeout is
 * nobody's to report.
 */
async function within<T>(ms: number, work: Promise<T>): Promise<T | 'timeout'> {
  work.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
