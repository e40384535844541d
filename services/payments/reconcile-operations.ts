import type { PaymentsDeps } from './payments.deps.ts';
import { withTransaction } from '../../lib/db/pool.ts';
import { scopeIdsOf } from '../../lib/idempotency/operation.ts';
import { FINISHED } from '../../lib/idempotency/owned-request.ts';
import { RequestTrace } from '../../lib/logging/request-trace.ts';
import {
  claimForSettlement,
  listUnknown,
  recordIntervention,
  type UnknownRequest,
} from '../../lib/idempotency/settlement.ts';
import { CANCEL_SPEC } from './cancel-payment.flow.ts';
import { CAPTURE_SPEC } from './capture-payment.flow.ts';
import { paymentOperationResumer, type PaymentOperationSpec } from './payment-operation.flow.ts';
import { REFUND_SPEC } from './refund-payment.flow.ts';
import {
  reconcileUnknownPayments,
  unsettled,
  type ReconciliationReport,
} from './reconcile-payments.ts';

/**
 * Unknown operations asked about per run. Each may take a probe and a send (two provider
 * timeouts), so a run is kept to what a few minutes of an unreachable provider cost.
 */
const RECONCILE_OPERATIONS_BATCH_SIZE = 16;

const SPECS: readonly PaymentOperationSpec[] = [CAPTURE_SPEC, REFUND_SPEC, CANCEL_SPEC];

export interface OperationsReconciliationReport {
  examined: number;
  /** Found at the provider, or proven absent and sent again: finished now. */
  settled: number;
  /** The provider still gave no answer: unknown until the next run. */
  undecided: number;
  failed: Array<{ tenantId: string; key: string; error: string }>;
}

/**
 * Settles captures, refunds and cancels whose outcome is unknown (their attempts went
 * unanswered), by asking the provider again as any resumer does: a probe by the operation's key
 * first; found, the operation finishes with it; proven absent, it is sent again under the same
 * key; no answer, it stays unknown. Unlike a charge, an operation on an existing charge is what
 * the merchant asked for and safe to send once the provider says it has none, so it is not
 * failed for want of an answer. Each is claimed first (at the token seen), so two reconcilers or
 * an operator never act on one request at once, and the claim is recorded as a re-drive.
 */
export async function reconcileUnknownOperations(
  deps: PaymentsDeps,
  decidedBy: string,
): Promise<OperationsReconciliationReport> {
  const specs = new Map(
    SPECS.flatMap((spec) => scopeIdsOf(spec.operation).map((id) => [id, spec])),
  );
  const unknown = await listUnknown(deps.engine.deps, {
    operations: [...specs.keys()],
    limit: RECONCILE_OPERATIONS_BATCH_SIZE,
  });
  const report: OperationsReconciliationReport = {
    examined: unknown.length,
    settled: 0,
    undecided: 0,
    failed: [],
  };
  await Promise.all(
    unknown.map(async (row) => {
      try {
        const settled = await settleOne(deps, { row, spec: specs.get(row.operation)!, decidedBy });
        report[settled ? 'settled' : 'undecided'] += 1;
      } catch (error) {
        report.failed.push(unsettled(row, error));
      }
    }),
  );
  return report;
}

async function settleOne(
  deps: PaymentsDeps,
  input: { row: UnknownRequest; spec: PaymentOperationSpec; decidedBy: string },
): Promise<boolean> {
  const { row, spec, decidedBy } = input;
  const scope = { tenantId: row.tenant_id, operation: spec.operation, key: row.key };
  const request = await claimForSettlement(deps.engine.deps, {
    scope,
    seenToken: row.fencing_token,
  });
  if (request === null) return false; // someone else is settling or re-driving it
  await withTransaction(deps.pool, (tx) =>
    recordIntervention(tx, {
      request,
      action: 'redriven',
      decidedBy,
      reason: `unknown ${spec.operation.publicName}: the provider is asked before anything is sent`,
      providerReference: null,
    }),
  );
  const trace = RequestTrace.start(deps.log, undefined);
  // The resumer probes first; an attempt without an answer releases it back to unknown (its
  // attempts are past the limit already).
  await paymentOperationResumer(deps, spec).resume(request, trace);
  return request.recoveryPoint === FINISHED;
}

/** One reconciliation run: unknown payments against the statement, then unknown operations. */
export async function reconcileUnknownRequests(
  deps: PaymentsDeps,
  decidedBy: string,
): Promise<ReconciliationReport & { operations: OperationsReconciliationReport }> {
  const payments = await reconcileUnknownPayments(deps, decidedBy);
  return { ...payments, operations: await reconcileUnknownOperations(deps, decidedBy) };
}
