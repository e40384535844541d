// POST /v1/charges/:id/capture, /void and /refunds after validation: the provider's
// idempotency rules around the rules in operation-plan.ts. Each request runs inside its key's
// queue (so one key never applies twice) and then its charge's queue (so two keys never act
// on one charge at once: twenty concurrent refunds cannot all pass the refundable check on
// the same balance). Locks are always taken key first, then charge, and charge creation takes
// only a key, so no two requests can wait on each other in a cycle.
// Of the payment-method behaviours only pm_card_unavailable reaches these operations: a key's
// first attempt gets a 503 that changes and stores nothing.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ChargeStore } from './charge-store.ts';
import type { JsonAnswer } from './charge-types.ts';
import { createExclusiveQueue } from './exclusive-queue.ts';
import type { FaultState } from './fault-state.ts';
import { errorAnswer, invalidRequest } from './http-json.ts';
import type { IdempotencyLedger } from './idempotency-ledger.ts';
import { answerFromLedger } from './idempotency-ledger.ts';
import type { OperationLog } from './operation-log.ts';
import { planOperation } from './operation-plan.ts';
import type { OperationRequest } from './operation-types.ts';
import { behaviourFor } from './payment-methods.ts';
import { buildRefund } from './refund-factory.ts';
import type { RefundStore } from './refund-store.ts';
import type { SettlementStore } from './settlement-store.ts';

/** Seconds a client is told to wait after an operation's 503; short because the outage
 * clears on the key's very next attempt. */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

export interface ChargeOperations {
  process(input: { idempotencyKey: string; request: OperationRequest }): Promise<JsonAnswer>;
}

export interface ChargeOperationsDeps {
  store: ChargeStore;
  refunds: RefundStore;
  settlements: SettlementStore;
  ledger: IdempotencyLedger;
  faults: FaultState;
  log: OperationLog;
}

interface Decision {
  answer: JsonAnswer;
  applied: boolean;
}

export function createChargeOperations(deps: ChargeOperationsDeps): ChargeOperations {
  const { store, refunds, settlements, ledger, faults, log } = deps;
  const chargeQueue = createExclusiveQueue();

  async function decide(input: {
    idempotencyKey: string;
    request: OperationRequest;
  }): Promise<Decision> {
    const { idempotencyKey, request } = input;
    const known = answerFromLedger(ledger, input);
    if (known !== undefined) return { answer: known, applied: false };
    /** Binds the key to this answer: the same request gets it again, forever. */
    const settle = (answer: JsonAnswer, applied: boolean): Decision => {
      ledger.store(idempotencyKey, { request, answer });
      return { answer, applied };
    };

    const charge = store.byId(request.chargeId);
    if (charge === undefined) {
      return settle(errorAnswer({ status: 404, code: 'CHARGE_NOT_FOUND' }), false);
    }
    if (
      behaviourFor(charge.paymentMethod) === 'unavailable' &&
      faults.claimOperationOutage(idempotencyKey)
    ) {
      const unavailable = errorAnswer({ status: 503, code: 'PROVIDER_UNAVAILABLE' });
      const headers = { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS) };
      return { answer: { ...unavailable, headers }, applied: false };
    }
    const plan = planOperation(request, charge);
    if (plan.kind === 'invalid') return { answer: invalidRequest(plan.message), applied: false };
    if (plan.kind === 'refuse') {
      return settle(errorAnswer({ status: plan.status, code: plan.code }), false);
    }

    // The card network is consulted between reading the charge and writing the result, as at
    // a real provider: other requests run meanwhile. Only the charge's queue keeps them from
    // planning on the balance read above, so this turn is what lets the contract test catch a
    // provider that lost that queue.
    await nextTurn();
    const updated = store.update(charge.id, () => plan.charge);
    if (request.kind !== 'refund') {
      // Kept for the probes only: the answer stays the charge, as it always was.
      const amount = request.kind === 'capture' ? updated.amountCaptured : null;
      settlements.record({ kind: request.kind, chargeId: charge.id, amount, idempotencyKey });
      return settle({ status: 200, body: { charge: updated } }, true);
    }
    if (plan.refundAmount === null) throw new Error('a refund planned without its amount');
    const refund = refunds.insert(
      buildRefund({
        chargeId: charge.id,
        amount: plan.refundAmount,
        reason: request.kind === 'refund' ? request.reason : null,
        idempotencyKey,
      }),
    );
    return settle({ status: 200, body: { refund, charge: updated } }, true);
  }

  return {
    async process(input) {
      const { idempotencyKey, request } = input;
      return ledger.runExclusive(idempotencyKey, () =>
        chargeQueue.runExclusive(request.chargeId, async () => {
          const { answer, applied } = await decide(input);
          // Recorded inside the charge's queue, so the log's order is the order of decisions.
          log.record({ kind: request.kind, chargeId: request.chargeId, idempotencyKey, applied });
          return answer;
        }),
      );
    },
  };
}
