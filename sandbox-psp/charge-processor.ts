// POST /v1/charges after validation: the provider's idempotency rules and the token failure
// modes. The decision runs inside the key's exclusive section (so two requests for one key can
// never both apply a charge); the deliberate hangs run outside it (so a response that is lost
// or blackholed does not stop later attempts from seeing the stored result).
// pm_card_unreachable is the exception: it stands for a provider that never received the call,
// so it hangs before the ledger is even consulted, whatever the key has seen before.
import type { ChargeStore } from './charge-store.ts';
import type { ChargeRequest, JsonAnswer } from './charge-types.ts';
import { buildCharge } from './charge-factory.ts';
import type { FaultState } from './fault-state.ts';
import { errorAnswer } from './http-json.ts';
import type { IdempotencyLedger } from './idempotency-ledger.ts';
import { answerFromLedger } from './idempotency-ledger.ts';
import { sleepFor, sleepUntil } from './interruptible-sleep.ts';
import type { PaymentMethodBehaviour } from './payment-methods.ts';
import { behaviourFor } from './payment-methods.ts';

/** Seconds a client is told to wait after a 503; short because the outage clears on attempt 3. */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

/** `hang`: the request is deliberately never answered; the client has to give up on its own. */
export type ChargeOutcome = { kind: 'answer'; answer: JsonAnswer } | { kind: 'hang' };

export interface ChargeProcessor {
  process(input: {
    idempotencyKey: string;
    request: ChargeRequest;
    receivedAtMs: number;
  }): Promise<ChargeOutcome>;
}

export interface ChargeProcessorDeps {
  store: ChargeStore;
  ledger: IdempotencyLedger;
  faults: FaultState;
  slowMs: number;
  blackholeMs: number;
  /** Aborted when the server closes, so no sleep outlives it. */
  shutdown: AbortSignal;
}

/** Every behaviour in which the request reaches the provider's books. */
type ReachableBehaviour = Exclude<PaymentMethodBehaviour, 'unreachable'>;

const HANG: ChargeOutcome = { kind: 'hang' };
const answer = (json: JsonAnswer): ChargeOutcome => ({ kind: 'answer', answer: json });

export function createChargeProcessor(deps: ChargeProcessorDeps): ChargeProcessor {
  const { store, ledger, faults, shutdown } = deps;

  /** Records the charge and its answer together: the key is bound from this moment on. */
  function apply(input: {
    idempotencyKey: string;
    request: ChargeRequest;
    failureCode: string | null;
  }): JsonAnswer {
    const charge = store.insert(buildCharge(input));
    const json: JsonAnswer =
      input.failureCode === null
        ? { status: 200, body: { charge } }
        : { status: 402, body: { error: { code: input.failureCode }, charge } };
    const bound = { kind: 'charge' as const, ...input.request };
    ledger.store(input.idempotencyKey, { request: bound, answer: json });
    return json;
  }

  async function decide(input: {
    idempotencyKey: string;
    request: ChargeRequest;
    receivedAtMs: number;
    behaviour: ReachableBehaviour;
  }): Promise<ChargeOutcome> {
    const { idempotencyKey, request, behaviour } = input;
    const known = answerFromLedger(ledger, {
      idempotencyKey,
      request: { kind: 'charge', ...request },
    });
    if (known !== undefined) return answer(known);
    const approve = (): JsonAnswer => apply({ idempotencyKey, request, failureCode: null });
    switch (behaviour) {
      case 'approve':
        return answer(approve());
      case 'decline':
        return answer(apply({ idempotencyKey, request, failureCode: 'CARD_DECLINED' }));
      case 'invalid-method':
        return answer(apply({ idempotencyKey, request, failureCode: 'INVALID_PAYMENT_METHOD' }));
      case 'slow':
        // Processing (not just the answer) takes slowMs, so a duplicate arriving meanwhile
        // queues behind this one and must not find "no charge yet" and apply a second.
        if (!(await sleepFor({ ms: deps.slowMs, signal: shutdown }))) return HANG;
        return answer(approve());
      case 'unavailable': {
        if (!faults.nextUnavailableAttemptFails(idempotencyKey)) return answer(approve());
        const unavailable = errorAnswer({ status: 503, code: 'PROVIDER_UNAVAILABLE' });
        const headers = { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS) };
        return answer({ ...unavailable, headers });
      }
      case 'lost-response':
        approve();
        return HANG;
      case 'timeout':
        return faults.claimTimeoutHang(idempotencyKey) ? HANG : answer(approve());
      case 'unknown-outcome': {
        const json = approve();
        const untilMs = input.receivedAtMs + deps.blackholeMs;
        faults.startBlackhole({ idempotencyKey, reference: request.reference, untilMs });
        return answer(json);
      }
    }
  }

  return {
    async process(input) {
      const behaviour = behaviourFor(input.request.paymentMethod);
      // Nothing is read or written, not even a queue slot: the provider never saw this call.
      if (behaviour === 'unreachable') return HANG;
      const outcome = await ledger.runExclusive(input.idempotencyKey, () =>
        decide({ ...input, behaviour }),
      );
      if (outcome.kind === 'hang') return outcome;
      // Every call for a blackholed key (first attempt, replays, mismatches) is held until the
      // blackhole lifts, then answered truthfully.
      const untilMs = faults.keyBlackholeUntil(input.idempotencyKey, Date.now());
      if (untilMs !== undefined && !(await sleepUntil({ untilMs, signal: shutdown }))) return HANG;
      return outcome;
    },
  };
}
