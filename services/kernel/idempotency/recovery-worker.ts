import type { IdempotencyEngine } from './engine.ts';
import { CLAIM_STALE_KEYS } from './idempotency.sql.ts';
import type { OperationDef } from './operation.ts';
import type { OwnedRequest } from './owned-request.ts';
import type { OwnedRow } from './types.ts';

/** Requests claimed per sweep: enough to drain a crash's backlog fast, few enough that one
 * sweep's provider calls cannot outlive the lease they were claimed under. */
const SWEEP_BATCH_SIZE = 16;

/** Drives an unfinished request of one operation from its recovery point to the end. */
export interface Resumer {
  operation: OperationDef;
  resume(request: OwnedRequest): Promise<unknown>;
}

/**
 * The recovery worker: on a schedule, claims unfinished requests whose lease has expired (their
 * owner died, or released them after an attempt without an answer) and resumes each from its
 * recovery point, exactly as a client retry would. Several processes may sweep the same table:
 * the claim is one UPDATE over `FOR UPDATE SKIP LOCKED`, and each claim bumps the fencing token.
 */
export class RecoveryWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = true;
  private readonly resumers: Map<string, Resumer>;

  constructor(
    private readonly engine: IdempotencyEngine,
    private readonly opts: {
      intervalMs: number;
      resumers: Resumer[];
      onError: (error: unknown) => void;
    },
  ) {
    this.resumers = new Map(opts.resumers.map((r) => [r.operation.id, r]));
  }

  start(): void {
    this.stopped = false;
    this.schedule();
  }

  /** Stops sweeping and waits for the sweep in progress, so shutdown leaves no half phase. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** Claims and resumes one batch; returns how many requests it claimed. */
  async sweepOnce(): Promise<number> {
    const { pool, leaseMs, metrics } = this.engine.deps;
    const { rows } = await pool.query<
      OwnedRow & { tenant_id: string; operation: string; key: string }
    >(CLAIM_STALE_KEYS, [leaseMs, SWEEP_BATCH_SIZE, [...this.resumers.keys()]]);
    await Promise.all(
      rows.map(async (row) => {
        const resumer = this.resumers.get(row.operation);
        if (resumer === undefined) return; // excluded by the claim's operation filter
        const scope = { tenantId: row.tenant_id, operation: resumer.operation, key: row.key };
        metrics.takeovers.inc({ operation: resumer.operation.publicName, by: 'worker' });
        try {
          await resumer.resume(this.engine.adopt(scope, row));
        } catch (error) {
          this.opts.onError(error);
        }
      }),
    );
    metrics.recoverySweeps.inc({ result: rows.length > 0 ? 'claimed' : 'empty' });
    return rows.length;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.sweepOnce()
        .catch((error: unknown) => {
          this.engine.deps.metrics.recoverySweeps.inc({ result: 'error' });
          this.opts.onError(error);
        })
        .finally(() => this.schedule());
    }, this.opts.intervalMs);
    this.timer.unref();
  }
}
