/**
 * `npm run bench:outbox-catch-up`: outbox retention catching up on a backlog (ADR 0072). A
 * scratch database gets `--events` events past the retention window, one in ten with a
 * delivered webhook delivery; then the job the app runs (outboxRetentionJob, default policy) runs
 * on it from now for `--seconds`, and each run prints what it deleted and whether it completed.
 * Run the independent harness's load (scripts/bench/harness-replay-rounds.sh) meanwhile to see
 * what catching up costs the request path: the harness's `postgresOtherDbs` is this job's
 * share.
 * Nothing is asserted on time.
 */
import { parseArgs } from 'node:util';
import { integerFlag } from './bench/args.ts';
import { benchPool, createScratchDatabase } from './bench/scratch-database.ts';
import {
  DEFAULT_OUTBOX_RETENTION,
  outboxRetentionJob,
  pruneOutbox,
} from '../lib/outbox/outbox-retention.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '3000000' },
    seconds: { type: 'string', default: '60' },
  },
});
const events = integerFlag('events', values.events, [1, 50_000_000]);
const seconds = integerFlag('seconds', values.seconds, [1, 3_600]);

const database = await createScratchDatabase();
const pool = benchPool(database.url);
try {
  // Past the window by ten days, and spread over time as the BRIN index expects.
  await pool.query(
    `INSERT INTO outbox_events (tenant_id, id, type, payload, created_at)
     SELECT '00000000-0000-4000-8000-00000000000a', 'evt_' || n, 'payment.succeeded',
            '{"payment":{"id":"pay_x","amount":"10.00","currency":"EUR","status":"SUCCEEDED"}}',
            now() - make_interval(secs => $2::float8 + 10 * 86400 + $1 - n)
       FROM generate_series(1, $1::int) AS n`,
    [events, DEFAULT_OUTBOX_RETENTION.retentionSeconds],
  );
  await pool.query(
    `INSERT INTO outbox_deliveries (tenant_id, event_id, consumer, status)
     SELECT '00000000-0000-4000-8000-00000000000a', 'evt_' || n, 'webhook:endpoint', 'delivered'
       FROM generate_series(1, $1::int, 10) AS n`,
    [events],
  );
  await pool.query('VACUUM ANALYZE outbox_events, outbox_deliveries');
  console.log(`[bench:outbox-catch-up] ${events} events past the window in ${database.name}`);

  const started = Date.now();
  const policy = DEFAULT_OUTBOX_RETENTION;
  const job = outboxRetentionJob(
    (from) =>
      pruneOutbox(pool, policy, { from }).then((pruned) => {
        const at = ((Date.now() - started) / 1000).toFixed(1);
        console.log(
          `${at} s: ${pruned.events} events, ${pruned.deliveries} deliveries, ` +
            `${pruned.complete ? 'complete' : 'budget spent'}`,
        );
        return pruned;
      }),
    { policy, intervalMs: 600_000, onError: (error) => console.error(error) },
  );
  job.start(0);
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  await job.stop();
} finally {
  await pool.end();
  await database.drop();
}
