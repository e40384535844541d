import type { Logger } from '../logging/logger.ts';
import type { ServiceLabel } from '../metrics.ts';
import { RequestTrace } from '../logging/request-trace.ts';
import { PeriodicJob } from '../periodic-job.ts';
import { randomUUID } from 'node:crypto';
import type { IdempotencyEngine } from './engine.ts';
import { metricLabels, scopeAnnotation } from './scope-identity.ts';
import { CLAIM_STALE_KEYS } from './idempotency.sql.ts';
import { moveLowWater } from './low-water.ts';
import { scopeIdsOf, type OperationDef } from './operation.ts';
import { FINISHED, type OwnedRequest } from './owned-request.ts';
import type { OwnedRow } from './types.ts';

/** Requests claimed per sweep: enough to drain a crash's backlog fast, few enough that one
 * sweep's provider calls cannot outlive the lease they were claimed under. */
const SWEEP_BATCH_SIZE = 16;

/** Drives an unfinished request of one operation from its recovery point to the end. */
export interface Resumer {
  operation: OperationDef;
  /** `trace`: the resumption as a request of its own, for its logs and its provider calls. */
  resume(request: OwnedRequest, trace: RequestTrace): Promise<unknown>;
}

/**
 * The recovery worker: on a schedule, claims unfinished requests whose lease has expired (their
 * owner died, or released them after an attempt without an answer) and resumes each from its
 * recovery point, exactly as a client retry would. Several processes may sweep the same table:
 * the claim is one UPDATE over `FOR UPDATE SKIP LOCKED`, and each claim bumps the fencing token.
 */
export class RecoveryWorker {
  private readonly resumers: Map<string, Resumer>;
  private readonly job: PeriodicJob;

  constructor(
    private readonly engine: IdempotencyEngine,
    private readonly opts: {
      intervalMs: number;
      resumers: Resumer[];
      /** The `service` label of its sweeps (docs/api.md §5). */
      service: ServiceLabel;
      /** Unexpected errors; a resumption's come with its request's logger. */
      onError: (error: unknown, log?: Logger) => void;
    },
  ) {
    // A row admitted under an earlier version of an operation is resumed by its current code.
    this.resumers = new Map(
      opts.resumers.flatMap((r) => scopeIdsOf(r.operation).map((id) => [id, r] as const)),
    );
    this.job = new PeriodicJob(
      () =>
        this.sweepOnce().catch((error: unknown) => {
          this.engine.deps.metrics.recoverySweeps.inc({ service: opts.service, result: 'error' });
          throw error;
        }),
      { intervalMs: opts.intervalMs, onError: opts.onError },
    );
  }

  start(): void {
    this.job.start();
  }

  /** Stops sweeping and waits for the sweep in progress, so shutdown leaves no half phase. */
  stop(): Promise<void> {
    return this.job.stop();
  }

  /** The resumer of an operation, for callers that re-drive one request by hand. */
  resumerOf(operationId: string): Resumer | undefined {
    return this.resumers.get(operationId);
  }

  /** Claims and resumes one batch; returns how many requests it claimed. */
  async sweepOnce(): Promise<number> {
    const { pool, leaseMs, metrics, log } = this.engine.deps;
    // The mark first, so that its reading of the rows admitted since the last sweep also prunes
    // their pages while they are fresh. A move that fails (a timeout, a failover) leaves the mark
    // where it was, which loses nothing (low-water.ts), and must not cost the sweep its claim.
    await moveLowWater(pool).catch((error: unknown) => this.opts.onError(error));
    const { rows } = await pool.query<
      OwnedRow & { tenant_id: string; operation: string; key: string }
    >(CLAIM_STALE_KEYS, [leaseMs, SWEEP_BATCH_SIZE, [...this.resumers.keys()]]);
    await Promise.all(
      rows.map(async (row) => {
        const resumer = this.resumers.get(row.operation);
        if (resumer === undefined) return; // excluded by the claim's operation filter
        const scope = { tenantId: row.tenant_id, operation: resumer.operation, key: row.key };
        metrics.takeovers.inc({ ...metricLabels(scope), by: 'worker' });
        // Each resumption is its own request in the logs, named as the worker's.
        const trace = RequestTrace.start(log, `worker-${randomUUID()}`);
        trace.annotate(scopeAnnotation(scope, this.engine.deps.keyring));
        trace.log.info({ recoveryPoint: row.recovery_point }, 'resuming a stale request');
        const request = this.engine.forTrace(trace).adopt(scope, row);
        // Where the resumption left the request: answered, or given back for a later attempt.
        let result: 'finished' | 'released' | 'error';
        try {
          await resumer.resume(request, trace);
          result = request.recoveryPoint === FINISHED ? 'finished' : 'released';
        } catch (error) {
          result = 'error';
          this.opts.onError(error, trace.log);
        }
        // The resumption's summary, as the gateway's `request` line is a request's.
        trace.log.info({ result, ...trace.summary() }, 'stale request resumed');
      }),
    );
    metrics.recoverySweeps.inc({
      service: this.opts.service,
      result: rows.length > 0 ? 'claimed' : 'empty',
    });
    metrics.recoveryLastSweep.set({ service: this.opts.service }, Date.now() / 1000);
    return rows.length;
  }
}
