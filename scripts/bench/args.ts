import { parseArgs } from 'node:util';

/** What one `npm run bench` measures, from its flags (USAGE says what each does). */
export type BenchOptions = NonNullable<ReturnType<typeof parseBenchArgs>>;

/**
 * Full runs: enough requests for stable percentiles, within a minute per phase. A short warm-up
 * leaves V8's compiler threads busy through the first measured phase and charges their CPU to
 * it, against whichever system happened to go first.
 */
const FULL = { requests: 2_000, warmUp: 3_000, rounds: 2, stormKeys: 50, pgbenchSeconds: 10 };
/** `--quick`: a smoke run of every phase, well under a minute of load in all. */
const QUICK = { requests: 150, warmUp: 50, rounds: 1, stormKeys: 10, pgbenchSeconds: 2 };
/** Every load phase stops after this long, whatever its count: a bound, not a target. */
const PHASE_LIMIT_MS = 60_000;
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
  --quick                smoke presets: small counts, ${QUICK.pgbenchSeconds} s pgbench runs
  --profile              every system under node --cpu-prof; per-layer table and profile paths
  --help                 this text
The gateway, the baselines and the PSP inherit the environment (LOG_LEVEL=silent, say).`;

/** `--name`'s integer, refused outside [min, max]. */
export function integerFlag(name: string, raw: string | number, [min, max]: [number, number]) {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`--${name} takes an integer in [${min}, ${max}]`);
  }
  return value;
}

/** `undefined`: --help was asked for (the caller prints USAGE and exits). */
export function parseBenchArgs(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      concurrency: { type: 'string', default: '1,16,64' },
      requests: { type: 'string' },
      rounds: { type: 'string' },
      'warm-up': { type: 'string' },
      quick: { type: 'boolean', default: false },
      profile: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return undefined;
  const preset = values.quick ? QUICK : FULL;
  const requests = integerFlag('requests', values.requests ?? preset.requests, [1, MAX_REQUESTS]);
  return {
    ...preset,
    concurrencies: values.concurrency
      .split(',')
      .map((c) => integerFlag('concurrency', c.trim(), [1, MAX_CONCURRENCY])),
    requests,
    rounds: integerFlag('rounds', values.rounds ?? preset.rounds, [1, requests]),
    warmUp: integerFlag('warm-up', values['warm-up'] ?? preset.warmUp, [1, MAX_REQUESTS]),
    profile: values.profile,
    phaseLimitMs: PHASE_LIMIT_MS,
    stormCopies: STORM_COPIES,
  };
}
