import { describe, expect, it } from 'vitest';
import {
  outboxRetentionJob,
  type OutboxPruned,
  type OutboxRetentionStage,
} from '../../lib/outbox/outbox-retention.ts';

const POLICY = { retentionSeconds: 60, batchSize: 10, budgetMs: 0 };

function stoppedAt(next: OutboxRetentionStage, complete = false): OutboxPruned {
  return { events: 0, deliveries: 0, inboxMessages: 0, circuits: 0, complete, next };
}

describe('outbox retention job', () => {
  it('starts each run where the last stopped, and after a failed run where that one started', async () => {
    // What each run returns: stopped in the inbox, failed, stopped in the circuits, done.
    const outcomes: Array<() => OutboxPruned> = [
      () => stoppedAt('inbox'),
      () => {
        throw new Error('connection lost');
      },
      () => stoppedAt('circuits'),
      () => stoppedAt('events', true),
      () => stoppedAt('inbox'),
    ];
    const froms: OutboxRetentionStage[] = [];
    const failures: unknown[] = [];
    let done!: () => void;
    const allRan = new Promise<void>((resolve) => (done = resolve));
    const job = outboxRetentionJob(
      (from) => {
        froms.push(from);
        const outcome = outcomes[froms.length - 1]!;
        if (froms.length === outcomes.length) done();
        return Promise.resolve().then(outcome);
      },
      // A short interval, so that the failed and the complete run are followed soon too.
      { policy: POLICY, intervalMs: 10, onError: (error) => failures.push(error) },
    );
    job.start(0);
    await allRan;
    await job.stop();
    expect(froms).toEqual(['events', 'inbox', 'inbox', 'circuits', 'events']);
    expect(failures).toHaveLength(1);
  });
});
