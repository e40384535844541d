/**
 * The fault schedule, drawn from the seed: which fault, on which gateway, after how many
 * launched operations and how many milliseconds later. Tying faults to the run's progress
 * rather than to wall-clock time keeps a replayed seed's faults in the same place relative to
 * the traffic even on a slower machine, and guarantees every fault lands while operations are
 * in flight (the launcher waits for a fault that is due, see clients.ts).
 */
import { Prng } from './prng.ts';
import { GATEWAY_COUNT, type Tier } from './tiers.ts';

export type FaultKind = 'sigkill' | 'sigstop' | 'backend-kill';

export interface FaultEvent {
  kind: FaultKind;
  /** The gateway slot (unused for backend kills: those hit every gateway's sessions). */
  slot: number;
  /** Fires once this many operations have been launched… */
  afterOps: number;
  /** …plus this delay, so it lands at a random moment, not on a launch. */
  delayMs: number;
  /** SIGSTOP only: how long the process stays stopped. */
  pauseMs: number;
  /**
   * SIGKILL only: the replacement is SIGKILLed too, this long into its start (migrations,
   * tenant bootstrap, partition maintenance), then replaced again. Null: a single kill.
   */
  againDuringStartMs: number | null;
}

/** Faults start once the first operations are under way and end before the last ones. */
const FIRST_FAULT_AT = 0.03;
const LAST_FAULT_AT = 0.93;
/** A fault lands up to this long after its launch threshold is crossed. */
const MAX_DELAY_MS = 1_500;
/**
 * A SIGSTOP outlasts the lease (2 s, tiers.ts) so the other gateway or a client retry takes
 * over what the paused one owns, and the paused one wakes as a zombie whose writes the fence
 * must refuse.
 */
const PAUSE_MS = { min: 3_000, max: 6_000 } as const;

/** Share of SIGKILL events whose replacement is killed again while it starts. */
const KILL_DURING_START_SHARE = 0.35;
/**
 * A start of the built gateway (loading modules, the migrations check, bootstrap, maintenance)
 * takes about as long as this window's upper end on two busy cores; a kill this long after
 * spawn lands inside most starts, and kills the new gateway as it serves when the start was
 * quicker. The report counts how many landed inside, so a slower start shows there.
 */
const DURING_START_MS = { min: 100, max: 1_200 } as const;

/** One lane per fault kind; each lane's events are in firing order. */
export type FaultSchedule = Record<FaultKind, FaultEvent[]>;

export function planFaults(input: { seed: number; tier: Tier }): FaultSchedule {
  const { seed, tier } = input;
  return {
    sigkill: sigkills({ rng: Prng.derive(seed, 'sigkill'), tier }),
    sigstop: spread({
      rng: Prng.derive(seed, 'sigstop'),
      tier,
      kind: 'sigstop',
      count: tier.sigstops,
    }),
    'backend-kill': spread({
      rng: Prng.derive(seed, 'backend-kill'),
      tier,
      kind: 'backend-kill',
      count: tier.backendKills,
    }),
  };
}

/** `count` events spread evenly over the run, each jittered within its own stretch. */
function spread(input: { rng: Prng; tier: Tier; kind: FaultKind; count: number }): FaultEvent[] {
  const { rng, tier, kind, count } = input;
  const from = tier.operations * FIRST_FAULT_AT;
  const width = (tier.operations * (LAST_FAULT_AT - FIRST_FAULT_AT)) / Math.max(1, count);
  return Array.from({ length: count }, (_, i) => ({
    kind,
    slot: rng.int(0, GATEWAY_COUNT - 1),
    afterOps: Math.floor(from + width * (i + rng.next())),
    delayMs: rng.int(0, MAX_DELAY_MS),
    pauseMs: kind === 'sigstop' ? rng.int(PAUSE_MS.min, PAUSE_MS.max) : 0,
    againDuringStartMs: null,
  }));
}

/**
 * SIGKILL events adding up to exactly the tier's SIGKILLs. Some kill the replacement again
 * while it starts: a moment as random as any other, and cheaper than a whole restart, which
 * keeps the CI tier's 30-odd kills within minutes on a busy machine.
 */
function sigkills(input: { rng: Prng; tier: Tier }): FaultEvent[] {
  const { rng, tier } = input;
  const doubles: boolean[] = [];
  for (let kills = 0; kills < tier.sigkills;) {
    const double = kills + 2 <= tier.sigkills && rng.chance(KILL_DURING_START_SHARE);
    doubles.push(double);
    kills += double ? 2 : 1;
  }
  const events = spread({ rng, tier, kind: 'sigkill', count: doubles.length });
  return events.map((event, i) => ({
    ...event,
    againDuringStartMs:
      doubles[i] === true ? rng.int(DURING_START_MS.min, DURING_START_MS.max) : null,
  }));
}
