/**
 * Fires the fault schedule at the stack: one lane per fault kind, each in its own order, the
 * lanes side by side (a gateway may be SIGKILLed while the other is paused, and PostgreSQL
 * sessions may be cut during either). It is also the launch gate: an operation is not launched
 * while a fault due well before it has not fired, so every fault lands amid traffic however
 * fast or slow the machine is.
 */
import type pg from 'pg';
import { isPrimaryLost } from '../../lib/db/primary-finder.ts';
import type { Formation, NodeName } from '../support/ha-formation.ts';
import type { TcpFaultProxy } from '../support/tcp-fault-proxy.ts';
import type { LaunchGate } from './clients.ts';
import type { Stats } from './journal.ts';
import type { FaultEvent, FaultKind, FaultSchedule } from './schedule.ts';
import type { GatewaySlot, ServiceSlot } from './stack.ts';

/** How far the launcher may run ahead of a fault that is due. */
const GATE_SLACK_OPS = 25;
const POLL_MS = 20;
/**
 * Every session of the gateways' service and outbox pools (application_name
 * 'payments-services', 'payments-outbox') on the scratch database: idle ones, ones mid-transaction, ones waiting on a lock. The harness's own
 * pool has another application_name and survives.
 */
const TERMINATE_BACKENDS = `
SELECT count(pg_terminate_backend(pid))::int AS terminated
  FROM pg_stat_activity
 WHERE datname = $1 AND application_name IN ('payments-services', 'payments-outbox')
   AND pid <> pg_backend_pid()`;

/** One fault as it happened: its kind, when it began, and when its lane moved on. */
export interface FiredFault {
  kind: FaultKind;
  at: number;
  endedAt: number | undefined;
}

export interface FaultCounts {
  sigkill: number;
  sigstop: number;
  backendKill: number;
  backendsTerminated: number;
  restarts: number;
  /** SIGKILLs aimed at a replacement while it starts, and those that found it still starting. */
  aimedAtStart: number;
  killedWhileStarting: number;
  network: number;
  primaryKills: number;
  switchovers: number;
  standbyStalls: number;
  /** SIGKILLs of a service process, payments or provider (split tiers). */
  serviceKills: number;
}

/**
 * The proxies the processes reach PostgreSQL (one per host) and the provider through, and in
 * split tiers each hop between processes (empty otherwise).
 */
export interface NetworkPaths {
  database: TcpFaultProxy[];
  provider: TcpFaultProxy;
  hops: TcpFaultProxy[];
}

/** What one failover cost the clients: how long until a payment succeeded again, and what they were told meanwhile. */
export interface FailoverCost {
  kind: 'primary-kill' | 'switchover' | 'standby-stall';
  node: NodeName;
  /**
   * The longest time without a successful payment in the window after the fault (from the
   * last success before it); null if none succeeded in the window at all.
   */
  outageMs: number | null;
  /** Answers counted by the clients during that longest gap. */
  answers: Pick<
    Stats,
    | 'outcomePending'
    | 'providerUnavailable'
    | 'databaseUnavailable'
    | 'internalErrors'
    | 'networkErrors'
    | 'timeouts'
    | 'inUse'
  >;
}

/** The negative control: how long the standby receives nothing before the primary crashes… */
const LOSE_TAIL_MS = 3_000;
/**
 * …and at least how many payments clients are told succeeded meanwhile, waited for up to
 * LOSE_TAIL_MAX_MS: a crash with nothing acknowledged since the hold loses nothing, and the
 * control would prove nothing (a seed whose crash fell where the run's last operations had
 * already finished once did exactly that).
 */
const LOSE_TAIL_MIN_ACKS = 5;
const LOSE_TAIL_MAX_MS = 20_000;

/** How long after a fault its cost is measured at most: a failover here takes seconds. */
const MEASURE_MS = 60_000;
/** …and how long after the formation is whole again. */
const AFTER_HEAL_MS = 5_000;

/** How long a formation fault may take to heal (a node back as a standby) before the run fails. */
const FORMATION_HEAL_MS = 120_000;

export class FaultInjector implements LaunchGate {
  readonly counts: FaultCounts = {
    sigkill: 0,
    sigstop: 0,
    backendKill: 0,
    backendsTerminated: 0,
    restarts: 0,
    aimedAtStart: 0,
    killedWhileStarting: 0,
    network: 0,
    primaryKills: 0,
    switchovers: 0,
    standbyStalls: 0,
    serviceKills: 0,
  };
  readonly failovers: FailoverCost[] = [];
  /**
   * When the path to the provider misbehaved: a charge sent then may never have reached it,
   * and the engine rightly ends such a payment FAILED/PROVIDER_CHARGE_ABSENT once the
   * provider's books prove it absent (the auditor allows that outcome for these ops alone).
   */
  readonly providerOutages: Array<{ from: number; to: number }> = [];
  /** Per lane, the index of the next event that has not fired. */
  private readonly next: Record<FaultKind, number> = {
    sigkill: 0,
    sigstop: 0,
    'backend-kill': 0,
    network: 0,
    'primary-kill': 0,
    switchover: 0,
    'standby-stall': 0,
    'service-kill': 0,
  };
  /** One formation fault at a time: each waits until the formation is whole again. */
  private formationTurn: Promise<void> = Promise.resolve();
  private readonly costs: Array<Promise<void>> = [];
  /** Every fault fired, when it began and when its lane moved on (ms since the epoch). */
  readonly fired: FiredFault[] = [];
  private stopped = false;
  private readonly restarts: Array<Promise<void>> = [];
  /** A gateway that would not start again: the run cannot go on without failing loudly. */
  private restartFailure: Error | undefined;

  constructor(
    private readonly deps: {
      schedule: FaultSchedule;
      slots: GatewaySlot[];
      /** Split tiers: the service processes, the provider first; empty otherwise. */
      services?: ServiceSlot[];
      pool: pg.Pool;
      databaseName: string;
      stats: Stats;
      network?: NetworkPaths;
      formation?: Formation;
      /** The negative control: hold the (asynchronous) standby behind before a primary crash. */
      loseTail?: boolean;
      /** When each successful createPayment so far was received, in order (failover-cost.ts). */
      successTimes?: () => number[];
    },
  ) {}

  /** Runs every lane to its end (or until stop()); then waits for the last restarts. */
  async run(): Promise<void> {
    const kinds = Object.keys(this.deps.schedule) as FaultKind[];
    await Promise.all(kinds.map((kind) => this.lane(kind)));
    await Promise.all(this.restarts);
    await Promise.all(this.costs);
    if (this.restartFailure !== undefined) throw this.restartFailure;
  }

  stop(): void {
    this.stopped = true;
    for (const slot of this.deps.slots) slot.resume();
  }

  async admit(index: number): Promise<void> {
    while (!this.stopped && this.earliestDue() + GATE_SLACK_OPS < index) await sleep(POLL_MS);
  }

  private earliestDue(): number {
    let earliest = Infinity;
    for (const [kind, events] of Object.entries(this.deps.schedule) as Array<
      [FaultKind, FaultEvent[]]
    >) {
      const event = events[this.next[kind]];
      if (event !== undefined) earliest = Math.min(earliest, event.afterOps);
    }
    return earliest;
  }

  private restart(slot: GatewaySlot): void {
    this.restarts.push(
      slot.boot().then(
        (started) => {
          if (started) this.counts.restarts += 1;
        },
        (error: unknown) => {
          this.restartFailure ??= error instanceof Error ? error : new Error(String(error));
        },
      ),
    );
  }

  private async lane(kind: FaultKind): Promise<void> {
    const events = this.deps.schedule[kind];
    for (const event of events) {
      while (!this.stopped && this.deps.stats.launched < event.afterOps) await sleep(POLL_MS);
      if (this.stopped) return;
      await sleep(event.delayMs);
      if (this.stopped) return;
      // The launcher waits on an event until it has begun (`started`), or else until it is over.
      let begun = false;
      const started = () => {
        if (!begun) this.next[kind] += 1;
        begun = true;
      };
      const record: FiredFault = { kind, at: Date.now(), endedAt: undefined };
      this.fired.push(record);
      await this.fire(event, started);
      record.endedAt = Date.now();
      started();
    }
  }

  private async fire(event: FaultEvent, started: () => void): Promise<void> {
    const slot = this.deps.slots[event.slot];
    switch (event.kind) {
      case 'sigkill': {
        if (slot === undefined) return;
        // Kill only while another gateway runs: a fleet rarely loses every node at once, and
        // a run spent with no gateway at all tests nothing but the clients' patience. (A
        // SIGSTOP of the other one may still leave none answering for a few seconds.)
        await Promise.all(this.deps.slots.filter((s) => s !== slot).map((s) => s.running()));
        await slot.kill();
        this.counts.sigkill += 1;
        // Restarted at once; the next kill of this slot waits until it runs again.
        this.restart(slot);
        if (event.againDuringStartMs === null) return;
        await sleep(event.againDuringStartMs);
        // The replacement dies too, mid-start (or just after, on a fast machine).
        this.counts.aimedAtStart += 1;
        if (await slot.killWhileStarting()) this.counts.killedWhileStarting += 1;
        else await slot.kill();
        this.counts.sigkill += 1;
        this.restart(slot);
        return;
      }
      case 'sigstop': {
        if (slot === undefined) return;
        // The lane is held for the pause; the other lanes go on meanwhile.
        if (await slot.pause(event.pauseMs)) this.counts.sigstop += 1;
        return;
      }
      case 'network': {
        const episode = event.network;
        const paths = this.deps.network;
        if (episode === null || paths === undefined) return;
        const proxies =
          episode.path === 'database'
            ? paths.database
            : episode.path === 'hop'
              ? paths.hops
              : [paths.provider];
        if (proxies.length === 0) return;
        const from = Date.now();
        await Promise.all(
          proxies.map((proxy) =>
            proxy.inject(episode.fault, { ms: episode.ms, delayMs: episode.delayMs }),
          ),
        );
        this.counts.network += 1;
        // A charge sent on a misbehaving path may never have reached the PSP.
        if (episode.path !== 'database') this.providerOutages.push({ from, to: Date.now() });
        return;
      }
      case 'primary-kill':
      case 'switchover':
      case 'standby-stall': {
        const turn = this.formationTurn.then(() => this.formationFault(event, started));
        this.formationTurn = turn.catch(() => undefined);
        await turn;
        return;
      }
      case 'service-kill': {
        const service = this.deps.services?.[event.slot];
        if (service === undefined) return;
        const from = Date.now();
        await service.killAndRestart();
        this.counts.serviceKills += 1;
        // The provider's: charges in flight through it are lost mid-hop, each to end once by a
        // probe under its key, a resend the PSP answers from its key, or reconciliation.
        // A payments process's: its payments are taken over under their leases; no outage of
        // the provider, so the audit allows no charge found absent for them.
        if (service.name === 'provider') this.providerOutages.push({ from, to: Date.now() });
        return;
      }
      case 'backend-kill': {
        const terminated = await this.onPrimary(async () => {
          const { rows } = await this.deps.pool.query<{ terminated: number }>(TERMINATE_BACKENDS, [
            this.deps.databaseName,
          ]);
          return rows[0]?.terminated ?? 0;
        });
        this.counts.backendKill += 1;
        this.counts.backendsTerminated += terminated;
        return;
      }
    }
  }

  /**
   * Waits LOSE_TAIL_MS, and on until clients have been told of `more` payments' success since
   * the call, or LOSE_TAIL_MAX_MS have passed.
   */
  private async untilAcknowledged(more: number): Promise<void> {
    const times = this.deps.successTimes ?? (() => []);
    const successes = times().length + more;
    const from = Date.now();
    await sleep(LOSE_TAIL_MS);
    while (times().length < successes && Date.now() - from < LOSE_TAIL_MAX_MS && !this.stopped)
      await sleep(POLL_MS);
  }

  /**
   * The harness's own statement, on whichever node is primary: during a failover (another
   * lane's) its connection may meet the old primary going down; it asks again until one
   * answers, as the gateways do.
   */
  private async onPrimary<T>(run: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + FORMATION_HEAL_MS;
    for (;;) {
      try {
        return await run();
      } catch (error) {
        if (!isPrimaryLost(error) || Date.now() > deadline) throw error;
        await sleep(POLL_MS * 10);
      }
    }
  }

  /**
   * A crash of the primary's node, a switchover, or a frozen standby; then the wait until the
   * formation is whole again (the old primary back as a standby), so the next one meets a
   * formation with a synchronous standby, as production would between incidents.
   */
  private async formationFault(event: FaultEvent, started: () => void): Promise<void> {
    const formation = this.deps.formation;
    if (formation === undefined) return;
    await formation.waitForStates(isWhole, FORMATION_HEAL_MS);
    const primary = await formation.primary();
    if (primary === undefined) throw new Error('the formation has no primary');
    const standby: NodeName = primary === 'node_1' ? 'node_2' : 'node_1';
    const at = Date.now();
    const before = { ...this.deps.stats };
    let node: NodeName = primary;
    switch (event.kind) {
      case 'primary-kill':
        if (this.deps.loseTail === true) {
          // Commits go on without the standby (it is asynchronous), clients are told, and
          // the crash takes those commits with it: the failover loses acknowledged answers.
          await formation.holdWal(primary, true);
          // Clients go on committing while the standby hears nothing: launches resume now.
          started();
          await this.untilAcknowledged(LOSE_TAIL_MIN_ACKS);
          await formation.killNode(primary); // the held senders die with it, their WAL unsent
        } else {
          await formation.killNode(primary);
        }
        this.counts.primaryKills += 1;
        // The standby is promoted; then the crashed node comes back and rejoins (pg_rewind).
        await formation.waitForStates(
          (states) => states.split(',')[standby === 'node_1' ? 0 : 1] === 'wait_primary',
          FORMATION_HEAL_MS,
        );
        await formation.runNode(primary);
        break;
      case 'switchover':
        await formation.switchover();
        this.counts.switchovers += 1;
        break;
      case 'standby-stall':
        node = standby;
        await formation.freezeNode(standby, true);
        await sleep(event.pauseMs);
        await formation.freezeNode(standby, false);
        this.counts.standbyStalls += 1;
        break;
      case 'sigkill':
      case 'sigstop':
      case 'backend-kill':
      case 'network':
      case 'service-kill':
        return; // not a formation fault
    }
    // Measured until the formation is whole again and a little after, and before the next
    // formation fault, so that no two failovers' costs overlap.
    let healedAt = Infinity;
    const measured = this.measure({ kind: event.kind, node, at, before }, () => healedAt);
    this.costs.push(measured);
    await formation.waitForStates(isWhole, FORMATION_HEAL_MS);
    healedAt = Date.now();
    await measured;
  }

  /**
   * Follows the successes after the fault until the formation is whole again (and
   * AFTER_HEAL_MS more, at most MEASURE_MS), keeping the longest gap between two
   * (the first counted from the last success before the fault) and the clients' answers during
   * it. A gap still open at the end counts up to the end: no payment succeeded since.
   */
  private async measure(
    fault: {
      kind: FailoverCost['kind'];
      node: NodeName;
      at: number;
      before: Stats;
    },
    healedAt: () => number,
  ): Promise<void> {
    const times = this.deps.successTimes;
    if (times === undefined) return;
    const end = fault.at + MEASURE_MS;
    let last =
      times()
        .filter((t) => t <= fault.at)
        .pop() ?? fault.at;
    let atLast = fault.before;
    let worst: { gapMs: number; answers: FailoverCost['answers'] } | null = null;
    const consider = (gapMs: number) => {
      if (worst !== null && gapMs <= worst.gapMs) return;
      worst = { gapMs, answers: answersBetween(atLast, this.deps.stats) };
    };
    while (Date.now() < Math.min(end, healedAt() + AFTER_HEAL_MS) && !this.stopped) {
      await sleep(POLL_MS * 5);
      for (const t of times().filter((time) => time > last)) {
        consider(t - last);
        last = t;
        atLast = { ...this.deps.stats };
      }
    }
    // Still no success at the window's end, with the load still running: the gap is open.
    if (!this.stopped) consider(Date.now() - last);
    const measured = worst as { gapMs: number; answers: FailoverCost['answers'] } | null;
    this.failovers.push({
      kind: fault.kind,
      node: fault.node,
      outageMs: measured?.gapMs ?? null,
      answers: measured?.answers ?? emptyFailoverAnswers(),
    });
  }
}

/** A primary and a secondary, whichever node is which. */
function isWhole(states: string): boolean {
  return states.split(',').sort().join(',') === 'primary,secondary';
}

function answersBetween(from: Stats, to: Stats): FailoverCost['answers'] {
  const answers = emptyFailoverAnswers();
  for (const key of Object.keys(answers) as Array<keyof typeof answers>) {
    answers[key] = to[key] - from[key];
  }
  return answers;
}

export function emptyFailoverAnswers(): FailoverCost['answers'] {
  return {
    outcomePending: 0,
    providerUnavailable: 0,
    databaseUnavailable: 0,
    internalErrors: 0,
    networkErrors: 0,
    timeouts: 0,
    inUse: 0,
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
