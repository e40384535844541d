import { randomInt } from 'node:crypto';
import { parseArgs } from 'node:util';
import {
  CI_TIER,
  FAILOVER_TIER,
  SPLIT_TIER,
  NEGATIVE_CONTROL_TIER,
  scaledTier,
  SOAK_TIER,
  type Tier,
} from './tiers.ts';

export interface RunArgs {
  tier: Tier;
  seed: number;
  /** A progress bar (always on for --soak; on a terminal for the CI tier too). */
  progress: boolean;
  /** Keep the processes' logs and the database of a run that passed, as a failed one keeps them. */
  keep: boolean;
}

const USAGE = `npm run test:chaos -- [--soak | --failover | --split] [--seed N] [--ops N] [--progress]
  --soak      24,000 operations, 370 SIGKILLs, 64 PostgreSQL backend kills (long)
  --failover  on a pg_auto_failover formation: crashes of the primary, switchovers, a frozen
              standby (scripts/ha/formation.sh installs and starts it)
  --split     the provider service in a process of its own, behind a fault proxy, SIGKILLed
              and restarted while charges are in flight
  --negative-control
              --failover with an asynchronous standby held behind before the primary crashes:
              passes only if the auditor reports the acknowledged answers the failover lost
  --seed N    replay the fault and operation schedule of seed N (printed by every run)
  --ops N     number of logical operations (fault counts scale with it)
  --progress  show the progress bar in the CI tier too
  --keep      keep the process logs and the database of a passing run too`;

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export function parseRunArgs(argv: string[]): RunArgs {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        soak: { type: 'boolean', default: false },
        failover: { type: 'boolean', default: false },
        split: { type: 'boolean', default: false },
        'negative-control': { type: 'boolean', default: false },
        seed: { type: 'string' },
        ops: { type: 'string' },
        progress: { type: 'boolean', default: false },
        keep: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
    }));
  } catch (error) {
    throw new UsageError(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
  }
  if (values.help) throw new UsageError(USAGE);
  if ([values.soak, values.failover, values.split].filter(Boolean).length > 1)
    throw new UsageError(`one of --soak, --failover and --split\n${USAGE}`);
  const base = values['negative-control']
    ? NEGATIVE_CONTROL_TIER
    : values.soak
      ? SOAK_TIER
      : values.failover
        ? FAILOVER_TIER
        : values.split
          ? SPLIT_TIER
          : CI_TIER;
  const ops = values.ops === undefined ? base.operations : positiveInt('--ops', values.ops);
  // A seed is 32 bits (the PRNG's state); a fresh one is printed so the run can be replayed.
  const seed =
    values.seed === undefined ? randomInt(1, 2 ** 31) : positiveInt('--seed', values.seed);
  return {
    tier: scaledTier(base, ops),
    seed: seed >>> 0,
    progress: values.soak || values.progress,
    keep: values.keep,
  };
}

function positiveInt(flag: string, raw: string): number {
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1)
    throw new UsageError(`${flag} must be a positive integer`);
  return value;
}

export { USAGE };
