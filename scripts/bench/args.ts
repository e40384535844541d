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
  /** Profile the gateway: `--cpu-prof` into this run's directory, and its statements counted. */
  profile: boolean;
  /** Profile with Linux perf instead: CPU per layer, on-CPU time only (perf-profiling.ts). */
  perf: boolean;
  /** LOG_LEVEL passed to the gateway (it ignores it while it has no logger). */
  logLevel: string;
}

/**
 * Full runs: enough requests for stable percentiles, within a minute per phase. The warm-up is
 * long enough for V8 to have optimised each system's hot code: after a few hundred requests
 * the gateway's compiler threads were still busy through the first phase (`--perf`); after
 * 3,000 they had settled, as the reference's had.
 */
const FULL = { requests: 2_000, stormKeys: 50, warmUp: 3_000, phaseLimitMs: 60_000, rounds: 2 };
/** `--quick`: a smoke run of every phase, well under a minute of load in all. */
const QUICK = { requests: 150, stormKeys: 10, warmUp: 50, phaseLimitMs: 15_000, rounds: 1 };
/** Copies per key in a storm: more than the gateway's usual concurrency of one client's retries. */
const STORM_COPIES = 20;
/** Bounds that keep a mistyped flag from starting an hour-long run or a thousand connections. */
const MAX_REQUESTS = 100_000;
const MAX_CONCURRENCY = 256;

const USAGE = `npm run bench -- [--concurrency 1,16,64] [--requests N] [--rounds R] [--warm-up N] [--quick] [--embedded] [--profile | --perf] [--log-level info]`;

export function parseBenchArgs(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      concurrency: { type: 'string', default: '1,16,64' },
      requests: { type: 'string' },
      rounds: { type: 'string' },
      quick: { type: 'boolean', default: false },
      embedded: { type: 'boolean', default: false },
      profile: { type: 'boolean', default: false },
      perf: { type: 'boolean', default: false },
      'warm-up': { type: 'string' },
      'log-level': { type: 'string', default: process.env['LOG_LEVEL'] ?? 'info' },
    },
  });
  if (values.profile && values.perf) throw new Error(`--profile or --perf, not both\n${USAGE}`);
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
    perf: values.perf,
    logLevel: values['log-level'],
  };
}
