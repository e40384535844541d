import type { PaymentsDeps } from './payments.deps.ts';
import { scopeIdsOf } from '../../lib/idempotency/operation.ts';
import {
  claimForSettlement,
  listUnknown,
  type UnknownRequest,
} from '../../lib/idempotency/settlement.ts';
import { outcomeOfCharge, type ProviderCharge } from '../provider/contract.ts';
import { CREATE_PAYMENT } from './create-payment.flow.ts';
import { finishWithOutcome, loadPayment } from './create-payment.finish.ts';

/** Unknown payments settled per run: one statement request serves them all. */
const RECONCILE_BATCH_SIZE = 200;
/**
 * How far before a payment's creation the statement starts: the provider stamps charges with
 * its own clock, which may run behind ours. Five minutes is far beyond any sane skew.
 */
const PROVIDER_CLOCK_SLACK_MS = 5 * 60_000;

/** The failure code of a payment whose charge the provider's final books prove never happened. */
export const CHARGE_ABSENT_FAILURE_CODE = 'PROVIDER_CHARGE_ABSENT';

export interface ReconciliationReport {
  examined: number;
  chargeFound: number;
  chargeAbsent: number;
  undecided: number;
  /** Records that could not be settled by machine (say, a charge voided at the provider). */
  failed: Array<{ tenantId: string; key: string; error: string }>;
}

/**
 * Settles createPayment requests whose outcome is unknown against the provider's statement:
 * - the statement holds a charge with the payment's derived key → the payment completes with
 *   that charge's outcome, exactly as the normal path would have completed it;
 * - the statement is final past the last attempt's timeout and holds no such charge → no charge
 *   can exist, and the payment fails with PROVIDER_CHARGE_ABSENT;
 * - otherwise it stays unknown for the next run.
 * Each settlement claims the request first (conditional on the token it saw), so concurrent
 * reconcilers or an operator never settle one request twice.
 */
export async function reconcileUnknownPayments(
  deps: PaymentsDeps,
  decidedBy: string,
): Promise<ReconciliationReport> {
  const unknown = await listUnknown(deps.engine.deps, {
    operations: scopeIdsOf(CREATE_PAYMENT),
    limit: RECONCILE_BATCH_SIZE,
  });
  const report: ReconciliationReport = {
    examined: unknown.length,
    chargeFound: 0,
    chargeAbsent: 0,
    undecided: 0,
    failed: [],
  };
  if (unknown.length === 0) return report;
  const oldest = Math.min(...unknown.map((row) => row.created_at.getTime()));
  const statement = await deps.provider.statement({
    from: new Date(oldest - PROVIDER_CLOCK_SLACK_MS).toISOString(),
    to: new Date(Date.now() + 1).toISOString(),
  });
  const byKey = new Map(statement.charges.map((charge) => [charge.idempotencyKey, charge]));
  const completeUntil = Date.parse(statement.completeUntil);
  for (const row of unknown) {
    // One record that cannot be settled by machine must not starve the others: it stays
    // unknown, is reported, and waits for an operator.
    try {
      report[await settleOne(deps, { row, byKey, completeUntil, decidedBy })] += 1;
    } catch (error) {
      report.failed.push(unsettled(row, error));
    }
  }
  return report;
}

/** A record that could not be settled by machine, as a report lists it for an operator. */
export function unsettled(
  row: UnknownRequest,
  error: unknown,
): { tenantId: string; key: string; error: string } {
  return {
    tenantId: row.tenant_id,
    key: row.key,
    error: error instanceof Error ? error.message : String(error),
  };
}

async function settleOne(
  deps: PaymentsDeps,
  input: {
    row: UnknownRequest;
    byKey: Map<string, ProviderCharge>;
    completeUntil: number;
    decidedBy: string;
  },
): Promise<'chargeFound' | 'chargeAbsent' | 'undecided'> {
  const { row, byKey, completeUntil, decidedBy } = input;
  if (row.resource_id === null) return 'undecided';
  const payment = await loadPayment(deps.pool, {
    tenantId: row.tenant_id,
    paymentId: row.resource_id,
  });
  if (payment === undefined) return 'undecided';
  const charge = byKey.get(payment.provider_key);
  // The provider may apply a request it received up to its apply window later: only books
  // final past that instant prove the charge absent.
  const lastPossibleCharge =
    (row.last_attempt_at?.getTime() ?? Date.now()) + deps.config.providerApplyWindowMs;
  if (charge === undefined && completeUntil < lastPossibleCharge) return 'undecided';

  const scope = { tenantId: row.tenant_id, operation: CREATE_PAYMENT, key: row.key };
  const request = await claimForSettlement(deps.engine.deps, {
    scope,
    seenToken: row.fencing_token,
  });
  if (request === null) return 'undecided'; // someone else is settling or re-driving it
  try {
    if (charge !== undefined) {
      await finishWithOutcome(deps, {
        request,
        payment,
        outcome: outcomeOfCharge(charge),
        settlement: {
          action: 'reconciled_charge_found',
          decidedBy,
          reason: `charge ${charge.id} is in the provider's statement`,
        },
      });
      return 'chargeFound';
    }
    await finishWithOutcome(deps, {
      request,
      payment,
      outcome: {
        kind: 'declined',
        providerReference: null,
        failureCode: CHARGE_ABSENT_FAILURE_CODE,
      },
      settlement: {
        action: 'reconciled_charge_absent',
        decidedBy,
        reason: `no charge with key ${payment.provider_key} in the provider's statement, final until ${new Date(completeUntil).toISOString()}`,
      },
    });
    return 'chargeAbsent';
  } catch (error) {
    // Claimed but not settled: hand it back as unknown (its attempts are past the limit), so
    // the recovery worker does not pick it up as an ordinary stuck request.
    await request.release('timeout');
    throw error;
  }
}
