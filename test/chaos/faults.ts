/**
 * Fires the fault schedule at the stack: one lane per fault kind, each in its own order, the
 * lanes side by side (a gateway may be SIGKILLed while the other is paused, and PostgreSQL
 * sessions may be cut during either). It is also the launch gate: an operation is not launched
 * while a fault due well before it has not fired, so every fault lands amid traffic however
 * fast or slow the machine is.
 */
import type pg from 'pg';
import type { LaunchGate } from './clients.ts';
import type { Stats } from './journal.ts';
import type { FaultEvent, FaultKind, FaultSchedule } from './schedule.ts';
import type { GatewaySlot } from './stack.ts';

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

export interface FaultCounts {
  sigkill: number;
  sigstop: number;
  backendKill: number;
  backendsTerminated: number;
  restarts: number;
  /** SIGKILLs aimed at a replacement while it starts, and those that found it still starting. */
  aimedAtStart: number;
  killedWhileStarting: number;
}

export class FaultInjector implements LaunchGate {
  readonly counts: FaultCounts = {
    sigkill: 0,
    sigstop: 0,
    backendKill: 0,
    backendsTerminated: 0,
    restarts: 0,
    aimedAtStart: 0,
    killedWhileStarting: 0,
  };
  /** Per lane, the index of the next event that has not fired. */
  private readonly next: Record<FaultKind, number> = { sigkill: 0, sigstop: 0, 'backend-kill': 0 };
  private stopped = false;
  private readonly restarts: Array<Promise<void>> = [];
  /** A gateway that would not start again: the run cannot go on without failing loudly. */
  private restartFailure: Error | undefined;

  constructor(
    private readonly deps: {
      schedule: FaultSchedule;
      slots: GatewaySlot[];
      pool: pg.Pool;
      databaseName: string;
      stats: Stats;
    },
  ) {}

  /** Runs every lane to its end (or until stop()); then waits for the last restarts. */
  async run(): Promise<void> {
    const kinds = Object.keys(this.deps.schedule) as FaultKind[];
    await Promise.all(kinds.map((kind) => this.lane(kind)));
    await Promise.all(this.restarts);
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
      await this.fire(event);
      this.next[kind] += 1;
    }
  }

  private async fire(event: FaultEvent): Promise<void> {
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
      case 'backend-kill': {
        const { rows } = await this.deps.pool.query<{ terminated: number }>(TERMINATE_BACKENDS, [
          this.deps.databaseName,
        ]);
        this.counts.backendKill += 1;
        this.counts.backendsTerminated += rows[0]?.terminated ?? 0;
        return;
      }
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
