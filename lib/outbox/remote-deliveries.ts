import type pg from 'pg';
import type { JsonValue } from '../canonical-json.ts';
import type { Delivery, DeliveryResult } from './delivery.ts';
import { MARK_ALL_DELIVERED } from './outbox.sql.ts';
import { CLAIM_REMOTE_DELIVERIES, CLOSE_CIRCUIT, RECORD_FAILURE } from './remote-deliveries.sql.ts';

/**
 * Deliveries to remote targets in flight at once, per sender (one per gateway process running
 * the outbox). A remote call may take its whole timeout: this many can hang at once before the
 * sender waits.
 */
export const REMOTE_SLOTS = 16;
/**
 * One tenant's deliveries in flight at most: half the sender. A tenant whose every endpoint hangs
 * holds half the slots for a timeout each, and the other half is always free for the rest; a
 * busy tenant with healthy endpoints still has eight calls in flight when nobody else waits.
 */
export const TENANT_REMOTE_SLOTS = REMOTE_SLOTS / 2;
/** Tenants a claim's scan visits at most; the next claim goes on after the last one. */
const TENANTS_PER_CLAIM = 64;
/**
 * Consecutive failures of a target that open its circuit. One failure is not a dead endpoint:
 * a live one refuses now and then (a deploy, a 503), and holding back all its deliveries for
 * that would delay every one of them. Five in a row, with no success between, is one that is
 * down; a dead endpoint costs that many timeouts before it waits alone.
 */
export const CIRCUIT_OPENS_AFTER_FAILURES = 5;
/**
 * An open circuit stays open this long, doubling with each further failure: at least as long as
 * a webhook's timeout, the time its last attempt cost us.
 */
export const CIRCUIT_BASE_MS = 5_000;
/** And never longer than this: the longest a single delivery backs off (delivery.ts). */
export const CIRCUIT_CAP_MS = 10 * 60_000;
/**
 * Completions wake the sender to claim again, but no sooner than this after its last claim: a
 * burst of fast completions is one claim of many rows, not a claim each.
 */
const CLAIM_GAP_MS = 5;
const NIL_UUID = '00000000-0000-0000-0000-000000000000';

export interface RemoteDeliveryDeps {
  pool: pg.Pool;
  claimLeaseMs: number;
  /** Runs one delivery through its handler: what it came to (a throw is a retry). */
  handle(delivery: Delivery): Promise<DeliveryResult>;
  /** Records a result other than delivered (and counts every one); true when delivered. */
  settle(delivery: Delivery, result: DeliveryResult): Promise<boolean>;
}

interface ClaimedRow {
  tenant_id: string | null;
  event_id: string | null;
  consumer: string | null;
  attempts: number | null;
  /** The target's consecutive failures when claimed. */
  failures: number | null;
  event: { type: string; payload: JsonValue; created_at: string } | null;
  scanned_to: string | null;
}

/**
 * Deliveries to remote targets (consumers named `kind:target`, a webhook endpoint each), sent
 * fairly and never in the way of the database's own work: the ledger and receipts are claimed
 * and run apart (dispatcher.ts), so a hanging endpoint holds back nothing but its own deliveries.
 *
 * - Fair across tenants: each claim goes round the tenants waiting, lowest turn first (a
 *   tenant's deliveries in flight plus its place in its queue), and no tenant holds more than
 *   TENANT_REMOTE_SLOTS (remote-deliveries.sql.ts).
 * - Isolated per target: a failure opens the target's circuit, and its other deliveries wait with
 *   it, backing off per target; after the wait one delivery probes it.
 * - Never batch-bound: each delivery is settled as it ends and its slot taken again, so a slow
 *   call holds one slot, not a claim's worth of fast ones behind it. Delivered marks go in one
 *   statement per claim cycle; a crash before it delivers them again under the same identity.
 */
export class RemoteDeliveries {
  private readonly busy = new Map<string, number>();
  private readonly running = new Set<Promise<void>>();
  private delivered: Delivery[] = [];
  /** Targets this sender saw fail since their last success: a success must reset them. */
  private readonly failedSinceSuccess = new Set<string>();
  private scanAfter = NIL_UUID;
  private lastClaimAt = 0;
  private wake: (() => void) | undefined;

  constructor(private readonly deps: RemoteDeliveryDeps) {}

  get inFlight(): number {
    return this.running.size;
  }

  /**
   * Claims as many due deliveries as the free slots allow, fairly, and starts each; returns
   * each one's run, which rejects if recording its outcome failed (the sender's loop reports
   * that and goes on; a caller draining the outbox sees it).
   */
  async claimAndStart(): Promise<Array<Promise<void>>> {
    const free = REMOTE_SLOTS - this.running.size;
    if (free <= 0) return [];
    this.lastClaimAt = Date.now();
    const { rows } = await this.deps.pool.query<ClaimedRow>(CLAIM_REMOTE_DELIVERIES, [
      this.deps.claimLeaseMs,
      free,
      TENANT_REMOTE_SLOTS,
      [...this.busy.keys()],
      [...this.busy.values()],
      this.scanAfter,
      TENANTS_PER_CLAIM,
      CIRCUIT_OPENS_AFTER_FAILURES,
    ]);
    const runs: Array<Promise<void>> = [];
    for (const row of rows) {
      if (row.tenant_id === null) {
        this.scanAfter = row.scanned_to ?? NIL_UUID;
        continue;
      }
      const delivery: Delivery = {
        tenantId: row.tenant_id,
        eventId: row.event_id!,
        consumer: row.consumer!,
        attempts: row.attempts!,
        event: {
          type: row.event!.type,
          payload: row.event!.payload,
          createdAt: row.event!.created_at,
        },
      };
      runs.push(this.start(delivery, row.failures ?? 0));
    }
    return runs;
  }

  /**
   * Resolves when a delivery in flight ends (and CLAIM_GAP_MS has passed since the last claim),
   * or after `ms`, whichever is first.
   */
  async pause(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.wake = resolve;
      timer = setTimeout(resolve, ms);
    });
    clearTimeout(timer);
    this.wake = undefined;
    const gap = this.lastClaimAt + CLAIM_GAP_MS - Date.now();
    if (gap > 0) await new Promise((resolve) => setTimeout(resolve, gap));
  }

  /** Ends a pause at once (stopping). */
  interrupt(): void {
    this.wake?.();
  }

  /** Waits for every delivery in flight, then marks the delivered ones. */
  async finishAll(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
    await this.markDelivered();
  }

  /** Marks every delivery that ended delivered since the last call, in one statement. */
  async markDelivered(): Promise<void> {
    if (this.delivered.length === 0) return;
    const batch = this.delivered;
    this.delivered = [];
    try {
      await this.deps.pool.query(MARK_ALL_DELIVERED, [
        batch.map((d) => d.tenantId),
        batch.map((d) => d.eventId),
        batch.map((d) => d.consumer),
      ]);
    } catch (error) {
      // Kept for the next call; if this process dies first, their leases run out and they are
      // delivered again under the same webhook-id.
      this.delivered.push(...batch);
      throw error;
    }
  }

  private start(delivery: Delivery, failures: number): Promise<void> {
    const tenant = delivery.tenantId;
    this.busy.set(tenant, (this.busy.get(tenant) ?? 0) + 1);
    const run = this.run(delivery, failures).finally(() => {
      const left = (this.busy.get(tenant) ?? 1) - 1;
      if (left === 0) this.busy.delete(tenant);
      else this.busy.set(tenant, left);
      this.running.delete(settled);
      this.wake?.();
    });
    // What the slot count and finishAll wait for: the run, its failure handled elsewhere.
    const settled = run.catch(() => undefined);
    this.running.add(settled);
    return run;
  }

  private async run(delivery: Delivery, failures: number): Promise<void> {
    const result = await this.deps.handle(delivery);
    const ids = [delivery.tenantId, delivery.consumer];
    const target = ids.join('/');
    if (await this.deps.settle(delivery, result)) this.delivered.push(delivery);
    if (result.kind === 'retry') {
      this.failedSinceSuccess.add(target);
      await this.deps.pool.query(RECORD_FAILURE, [
        ...ids,
        CIRCUIT_BASE_MS,
        CIRCUIT_CAP_MS,
        CIRCUIT_OPENS_AFTER_FAILURES,
      ]);
    } else if (failures > 0 || this.failedSinceSuccess.has(target)) {
      // Answered (or gone): the failures in a row end here. Only for a target with failures on
      // record, so a healthy endpoint's delivery costs no statement more.
      this.failedSinceSuccess.delete(target);
      await this.deps.pool.query(CLOSE_CIRCUIT, ids);
    }
  }
}
