import { isPrimaryLost } from '../lib/db/primary-finder.ts';

/**
 * How long a starting process waits for its database through connection failures: longer than
 * a failover (seconds) and a network blip, short enough that a database that is really gone
 * still fails the start, with its cause, for the supervisor to see.
 */
const START_WAIT_MS = 30_000;
const RETRY_MS = 250;

/**
 * Runs a start-up step against the database again while it fails as a lost connection does
 * (a reset, a refusal, a failover's 57P01 or 25006: isPrimaryLost), up to START_WAIT_MS. A
 * gateway restarted during a failover or a network blip then starts once the database answers,
 * instead of exiting and leaving its supervisor to try again blind. Any other error, and the
 * last one once the wait is over, fails the start.
 */
export async function untilDatabaseAnswers<T>(
  step: () => Promise<T>,
  options: {
    waitMs?: number;
    /** A step's own way of failing from a lost connection (migrate.ts: an ended transaction). */
    alsoLost?: (error: unknown) => boolean;
  } = {},
): Promise<T> {
  const deadline = Date.now() + (options.waitMs ?? START_WAIT_MS);
  const lost = (error: unknown) => isPrimaryLost(error) || (options.alsoLost?.(error) ?? false);
  for (;;) {
    try {
      return await step();
    } catch (error) {
      if (!lost(error) || Date.now() + RETRY_MS > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }
}
