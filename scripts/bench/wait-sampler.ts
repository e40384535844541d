/**
 * What a database's backends are doing while a block runs, sampled from pg_stat_activity: each
 * active backend counts once per sample under its wait event, or as `CPU` when it waits for
 * nothing. Contention shows as LWLock or Lock samples that grow with concurrency; a backend
 * that only burns more CPU per statement shows as more `CPU` samples per request.
 *
 * The sampler's connection is to another database on the same server (`postgres`), so its own
 * backend is not counted among the sampled database's backends, nor in its CPU.
 */
import pg from 'pg';
import { BENCH_APPLICATION_NAME } from './scratch-database.ts';

/** Often enough for a block of a few seconds to give thousands of samples. */
const SAMPLE_INTERVAL_MS = 10;

/**
 * Active backends by wait event, and, as `backends started`, each backend that connected since
 * the sampler began (one row per sample it is seen in; counted once below): a pool that opens
 * connections during a block charges each new backend's start-up to that block.
 */
const SAMPLE = `
  SELECT CASE WHEN wait_event IS NULL THEN 'CPU'
              ELSE wait_event_type || ':' || wait_event END AS what,
         count(*)::int AS n, '{}'::int[] AS started
    FROM pg_stat_activity
   WHERE datname = $1 AND state = 'active' AND pid <> pg_backend_pid()
     AND application_name <> $2
   GROUP BY 1
  UNION ALL
  SELECT 'backends started', 0, coalesce(array_agg(pid), '{}')
    FROM pg_stat_activity
   WHERE datname = $1 AND backend_start >= $3 AND application_name <> $2`;

export interface WaitSamples {
  samples: number;
  /** Backend-samples per wait event (`CPU`: running). */
  byWhat: Map<string, number>;
}

export interface WaitSampler {
  stop(): Promise<WaitSamples>;
}

/** The database `url` names, replaced by `postgres` on the same server. */
function maintenanceUrl(url: string): string {
  const parsed = new URL(url);
  parsed.pathname = '/postgres';
  return parsed.toString();
}

/** Starts sampling `dbName`'s active backends (not the bench's own) until stop(). */
export async function startWaitSampler(url: string, dbName: string): Promise<WaitSampler> {
  const client = new pg.Client({
    connectionString: maintenanceUrl(url),
    application_name: BENCH_APPLICATION_NAME,
  });
  await client.connect();
  const result: WaitSamples = { samples: 0, byWhat: new Map() };
  const started = new Set<number>();
  const since = new Date();
  let stopping = false;
  const loop = (async () => {
    while (!stopping) {
      const { rows } = await client.query<{ what: string; n: number; started: number[] }>(SAMPLE, [
        dbName,
        BENCH_APPLICATION_NAME,
        since,
      ]);
      result.samples++;
      for (const row of rows) {
        result.byWhat.set(row.what, (result.byWhat.get(row.what) ?? 0) + row.n);
        for (const pid of row.started) started.add(pid);
      }
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_INTERVAL_MS));
    }
  })();
  return {
    async stop() {
      stopping = true;
      try {
        await loop;
      } finally {
        await client.end();
      }
      result.byWhat.set('backends started', started.size);
      return result;
    },
  };
}

/** Adds `from` into `into`. */
export function addWaits(into: WaitSamples, from: WaitSamples): void {
  into.samples += from.samples;
  for (const [what, n] of from.byWhat) into.byWhat.set(what, (into.byWhat.get(what) ?? 0) + n);
}
