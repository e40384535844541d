import { LeaseLostError } from '../errors.ts';
import { HEARTBEAT_KEY } from './idempotency.sql.ts';
import type { EngineDeps } from './types.ts';

/**
 * Beats per lease while an owner waits outside a transaction: every third of it, so two beats
 * in a row may fail (a pool wait, a restarting database) before a live owner's lease runs out.
 */
export const HEARTBEATS_PER_LEASE = 3;

/**
 * The shortest lease an owner can keep alive. A beat every third of it must fit a wait for a
 * pooled connection and a round trip on a loaded database with room to spare; below a second, a
 * GC pause or a slow checkout would let a live owner's lease run out and its request be taken
 * over mid-call. Start refuses a shorter LEASE_MS (config-schema.ts), and so does the engine.
 */
export const MIN_LEASE_MS = 1_000;

/** The row an owner holds: its scope as admitted, its token, and its primary key. */
export interface HeldRow {
  tenantId: string;
  /** The operation id the row was admitted under. */
  operation: string;
  key: string;
  fencingToken: string;
  id: string;
  /** The partition key; a heartbeat's row is unfinished, so it does not move (ownersRow). */
  expiresAt: Date;
}

/**
 * An owner's lease while it waits on something outside its transaction (a provider call, a
 * probe): renewed every third of the lease with a write fenced by the owner's token, so only a
 * dead or wedged owner's lease runs out (a SIGSTOPped process beats no more). A beat that finds
 * the token gone means the request was taken over: the owner stops before its next external
 * call (`during` throws LeaseLostError), and its late writes are refused by the phases' fence.
 */
export class LeaseHeartbeat {
  private lost = false;
  /** When the lease ends at the latest, by this process's clock: the last renewal's send time
   * plus the lease, so a renewal's own round trip never counts in the owner's favour. */
  private heldUntilMs: number;

  constructor(
    private readonly deps: Pick<EngineDeps, 'pool' | 'leaseMs' | 'log'>,
    private readonly row: HeldRow,
  ) {
    this.heldUntilMs = Date.now() + deps.leaseMs;
  }

  private get intervalMs(): number {
    return this.deps.leaseMs / HEARTBEATS_PER_LEASE;
  }

  /** The lease was extended by a write sent at `sentAtMs` (a phase's commit, a beat). */
  renewed(sentAtMs: number): void {
    this.heldUntilMs = Math.max(this.heldUntilMs, sentAtMs + this.deps.leaseMs);
  }

  /**
   * Runs `wait` with the lease kept alive. Throws LeaseLostError instead of starting it when
   * the lease is lost, or may have run out and cannot be renewed (the owner was paused longer
   * than a beat, or the database did not answer the beats): the owner must not act then.
   */
  async during<T>(wait: () => Promise<T>): Promise<T> {
    await this.ensureHeld();
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    let beating: Promise<void> = Promise.resolve();
    const schedule = () => {
      timer = setTimeout(() => {
        beating = this.beat().finally(() => {
          if (!stopped) schedule();
        });
      }, this.intervalMs);
    };
    schedule();
    try {
      return await wait();
    } finally {
      stopped = true;
      clearTimeout(timer);
      await beating;
    }
  }

  private async ensureHeld(): Promise<void> {
    if (!this.lost && Date.now() >= this.heldUntilMs - this.intervalMs) await this.beat();
    if (this.lost || Date.now() >= this.heldUntilMs) {
      throw new LeaseLostError(`${this.row.operation}/${this.row.tenantId}`);
    }
  }

  private async beat(): Promise<void> {
    const sentAtMs = Date.now();
    const { tenantId, operation, key, fencingToken, id, expiresAt } = this.row;
    try {
      const { rowCount } = await this.deps.pool.query(HEARTBEAT_KEY, [
        tenantId,
        operation,
        key,
        fencingToken,
        this.deps.leaseMs,
        id,
        expiresAt,
      ]);
      if (rowCount === 1) this.renewed(sentAtMs);
      else {
        this.lost = true;
        this.deps.log.warn({ fencingToken }, 'lease lost while waiting: another owner took over');
      }
    } catch (error) {
      // Unknown, not lost: the next beat may get through. If none does before the lease ends,
      // the owner stops before its next external call (ensureHeld).
      this.deps.log.warn({ err: error }, 'lease heartbeat failed');
    }
  }
}
