/**
 * The fault schedule, drawn from the seed: which fault, on which gateway, after how many
 * launched operations and how many milliseconds later. Tying faults to the run's progress
 * rather than to wall-clock time keeps a replayed seed's faults in the same place relative to
 * the traffic even on a slower machine, and guarantees every fault lands while operations are
 * in flight (the launcher waits for a fault that is due, see clients.ts).
 */
import type { NetworkFault } from '../support/tcp-fault-proxy.ts';
import { Prng } from './prng.ts';
import { GATEWAY_COUNT, SPLIT_PAYMENTS, type Tier } from './tiers.ts';

export type FaultKind =
  | 'sigkill'
  | 'sigstop'
  | 'backend-kill'
  | 'network'
  | 'primary-kill'
  | 'switchover'
  | 'standby-stall'
  | 'service-kill';

/** A network episode: on which path, what kind, for how long. */
export interface NetworkEpisode {
  /** `hop`: every hop between processes, gateway → payments → provider (split tiers). */
  path: 'database' | 'provider' | 'hop';
  fault: NetworkFault;
  ms: number;
  /** `latency` only: how long each chunk is held. */
  delayMs: number;
}

export interface FaultEvent {
  kind: FaultKind;
  /**
   * The gateway slot (unused for backend kills: those hit every gateway's sessions); for a
   * service kill, the service process (0: the provider, 1…: the payments processes).
   */
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
  /** `network` only. */
  network: NetworkEpisode | null;
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

/**
 * Network episodes. A blackhole or a half-open episode outlasts nothing the gateway waits for
 * on purpose (a provider call's timeout, a lease): it is the client-side timeouts and the
 * settle-by-reading-back paths that must bring the requests caught in it to an answer.
 */
const NETWORK_FAULTS: NetworkFault[] = ['latency', 'reset', 'blackhole', 'half-open'];
const NETWORK_MS = { min: 1_000, max: 5_000 } as const;
const LATENCY_DELAY_MS = { min: 50, max: 600 } as const;
/** A frozen standby: long enough for the monitor to take it out of the synchronous set. */
const STANDBY_STALL_MS = { min: 4_000, max: 9_000 } as const;

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
    network: networkEpisodes({ rng: Prng.derive(seed, 'network'), tier }),
    'primary-kill': spread({
      rng: Prng.derive(seed, 'primary-kill'),
      tier,
      kind: 'primary-kill',
      count: tier.primaryKills,
    }),
    switchover: spread({
      rng: Prng.derive(seed, 'switchover'),
      tier,
      kind: 'switchover',
      count: tier.switchovers,
    }),
    'standby-stall': spread({
      rng: Prng.derive(seed, 'standby-stall'),
      tier,
      kind: 'standby-stall',
      count: tier.standbyStalls,
    }).map((event, i, all) => ({
      ...event,
      pauseMs: Prng.derive(seed, `standby-stall-${i}-of-${all.length}`).int(
        STANDBY_STALL_MS.min,
        STANDBY_STALL_MS.max,
      ),
    })),
    'service-kill': serviceKills({ rng: Prng.derive(seed, 'service-kill'), tier }),
  };
}

/** Network episodes spread over the run, each on a path and of a kind drawn from the seed. */
function networkEpisodes(input: { rng: Prng; tier: Tier }): FaultEvent[] {
  const { rng, tier } = input;
  return spread({ rng, tier, kind: 'network', count: tier.networkFaults }).map((event) => {
    const fault = NETWORK_FAULTS[rng.int(0, NETWORK_FAULTS.length - 1)] ?? 'latency';
    return {
      ...event,
      network: {
        // A split tier gives a third of its episodes to the hop; the others draw as before.
        path: tier.split && rng.chance(1 / 3) ? 'hop' : rng.chance(0.5) ? 'database' : 'provider',
        fault,
        ms: rng.int(NETWORK_MS.min, NETWORK_MS.max),
        delayMs: rng.int(LATENCY_DELAY_MS.min, LATENCY_DELAY_MS.max),
      },
    };
  });
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
    network: null,
  }));
}

/** Service kills spread over the run, each at a service process drawn from the seed. */
function serviceKills(input: { rng: Prng; tier: Tier }): FaultEvent[] {
  const { rng, tier } = input;
  return spread({ rng, tier, kind: 'service-kill', count: tier.serviceKills }).map((event) => ({
    ...event,
    slot: rng.int(0, SPLIT_PAYMENTS),
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
