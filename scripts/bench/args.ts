import { parseArgs } from 'node:util';

/** What one `npm run bench` measures, from its flags. */
export interface BenchOptions {
  /** Requests in flight at once, one set of phases per value. */
  concurrencies: number[];
  /** Requests per load phase (new keys, replays); every phase also stops at `phaseLimitMs`. */
  requests: number;
  /** Duplicate storms: this many keys, each sent `stormCopies` times. */
  stormKeys: number;
  stormCopies: number;
  /** Each phase runs in this many rounds, the systems taking turns (see phase-plan.ts). */
  rounds: number;
  /** A private embedded cluster instead of the shared server (see scratch-database.ts). */
  embedded: boolean;
  /** Requests per system before anything is measured (JIT, pools, caches). */
  warmUp: number;
  /** Every load phase stops after this long even if its request count is not reached. */
  phaseLimitMs: number;
  /** Every system under `node --cpu-prof`, summed per layer after the run (profiling.ts). */
  profile: boolean;
  /** Length of each pgbench run (PostgreSQL's commit and read ceilings). */
  pgbenchSeconds: number;
  /** LOG_LEVEL passed to the gateway (it ignores it while it has no logger). */
  logLevel: string;
}

/**
 * Full runs: enough requests for stable percentiles, within a minute per phase. A short warm-up
 * leaves V8's compiler threads busy through the first measured phase and charges their CPU to
 * it, against whichever system happened to go first.
 */
const FULL = {
  requests: 2_000,
  stormKeys: 50,
  warmUp: 3_000,
  phaseLimitMs: 60_000,
  rounds: 2,
  pgbenchSeconds: 10,
};
/** `--quick`: a smoke run of every phase, well under a minute of load in all. */
const QUICK = {
  requests: 150,
  stormKeys: 10,
  warmUp: 50,
  phaseLimitMs: 15_000,
  rounds: 1,
  pgbenchSeconds: 2,
};
/** Copies per key in a storm: more than the gateway's usual concurrency of one client's retries. */
const STORM_COPIES = 20;
/** Bounds that keep a mistyped flag from starting an hour-long run or a thousand connections. */
const MAX_REQUESTS = 100_000;
const MAX_CONCURRENCY = 256;

export const USAGE = `npm run bench -- [options]
  --concurrency 1,16,64  requests in flight; one set of phases per value
  --requests N           requests per phase: new keys, replays (default ${FULL.requests}, --quick ${QUICK.requests})
  --rounds R             each phase in R rounds, the systems taking turns (default ${FULL.rounds})
  --warm-up N            requests per system before measuring (default ${FULL.warmUp}, --quick ${QUICK.warmUp})
  --quick                smoke presets: small counts, short limits, ${QUICK.pgbenchSeconds} s pgbench runs
  --embedded             a private PostgreSQL cluster instead of the shared server
  --profile              every system under node --cpu-prof; per-layer table and profile paths
  --log-level LEVEL      the gateway's LOG_LEVEL (default $LOG_LEVEL or info)
  --help                 this text`;

/** `undefined`: --help was asked for (the caller prints USAGE and exits). */
export function parseBenchArgs(argv: string[]): BenchOptions | undefined {
  const { values } = parseArgs({
    args: argv,
    options: {
      concurrency: { type: 'string', default: '1,16,64' },
      requests: { type: 'string' },
      rounds: { type: 'string' },
      quick: { type: 'boolean', default: false },
      embedded: { type: 'boolean', default: false },
      profile: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
      'warm-up': { type: 'string' },
      'log-level': { type: 'string', default: process.env['LOG_LEVEL'] ?? 'info' },
    },
  });
  if (values.help) return undefined;
  const preset = values.quick ? QUICK : FULL;
  const concurrencies = values.concurrency.split(',').map((part) => Number(part.trim()));
  for (const c of concurrencies) {
    if (!Number.isInteger(c) || c < 1 || c > MAX_CONCURRENCY) {
      throw new Error(`--concurrency takes integers in [1, ${MAX_CONCURRENCY}]\n${USAGE}`);
    }
  }
  const requests = values.requests === undefined ? preset.requests : Number(values.requests);
  if (!Number.isInteger(requests) || requests < 1 || requests > MAX_REQUESTS) {
    throw new Error(`--requests takes an integer in [1, ${MAX_REQUESTS}]\n${USAGE}`);
  }
  const warmUp = values['warm-up'] === undefined ? preset.warmUp : Number(values['warm-up']);
  if (!Number.isInteger(warmUp) || warmUp < 1 || warmUp > MAX_REQUESTS) {
    throw new Error(`--warm-up takes an integer in [1, ${MAX_REQUESTS}]\n${USAGE}`);
  }
  const rounds = values.rounds === undefined ? preset.rounds : Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > requests) {
    throw new Error(`--rounds takes an integer in [1, requests]\n${USAGE}`);
  }
  return {
    concurrencies,
    requests,
    rounds,
    embedded: values.embedded,
    stormKeys: preset.stormKeys,
    stormCopies: STORM_COPIES,
    warmUp,
    phaseLimitMs: preset.phaseLimitMs,
    profile: values.profile,
    pgbenchSeconds: preset.pgbenchSeconds,
    logLevel: values['log-level'],
  };
}
