// The rules of capture, void and refund as a pure function of the request and the charge as
// it stands: which change to make, or why none can be made. The caller decides when to read
// the charge and when to write the plan back (see charge-operations.ts).
import type { Charge, ChargeStatus } from './charge-types.ts';
import { fromMinorUnits, scaleOf, toMinorUnits } from './decimal-amount.ts';
import type { OperationKind, OperationRequest } from './operation-types.ts';

/** The only status each operation starts from: capture and void settle an authorization
 * (once: the part not captured is released), a refund returns money that was captured. */
const REQUIRED_STATUS: Readonly<Record<OperationKind, ChargeStatus>> = {
  capture: 'authorized',
  void: 'authorized',
  refund: 'captured',
};

export type OperationPlan =
  /** `refundAmount` is set for a refund only, at the charge's scale. */
  | { kind: 'apply'; charge: Charge; refundAmount: string | null }
  /** A refusal of a well-formed request: stored for the key and replayed. */
  | { kind: 'refuse'; status: number; code: string }
  /** A request that cannot even be read against this charge: 400, not stored. */
  | { kind: 'invalid'; message: string };

/** Minor units of an amount the provider itself wrote at this scale. */
function ownUnits(amount: string, scale: number): bigint {
  const units = toMinorUnits(amount, scale);
  if (units === undefined) throw new Error(`stored amount ${amount} does not fit scale ${scale}`);
  return units;
}

export function planOperation(request: OperationRequest, charge: Charge): OperationPlan {
  const scale = scaleOf(charge.amount);
  const units = request.kind === 'void' ? 0n : toMinorUnits(request.amount, scale);
  if (units === undefined) {
    return {
      kind: 'invalid',
      message: `amount must have at most ${scale} decimals, as the charge`,
    };
  }
  if (charge.status !== REQUIRED_STATUS[request.kind]) {
    return { kind: 'refuse', status: 409, code: 'INVALID_CHARGE_STATE' };
  }
  switch (request.kind) {
    case 'void':
      return { kind: 'apply', charge: { ...charge, status: 'voided' }, refundAmount: null };
    case 'capture': {
      if (units > ownUnits(charge.amount, scale)) {
        return { kind: 'refuse', status: 422, code: 'AMOUNT_EXCEEDS_AUTHORIZED' };
      }
      const amountCaptured = fromMinorUnits(units, scale);
      return {
        kind: 'apply',
        charge: { ...charge, status: 'captured', amountCaptured },
        refundAmount: null,
      };
    }
    case 'refund': {
      const refunded = ownUnits(charge.amountRefunded, scale);
      if (units > ownUnits(charge.amountCaptured, scale) - refunded) {
        return { kind: 'refuse', status: 422, code: 'AMOUNT_EXCEEDS_REFUNDABLE' };
      }
      const amountRefunded = fromMinorUnits(refunded + units, scale);
      return {
        kind: 'apply',
        charge: { ...charge, amountRefunded },
        refundAmount: fromMinorUnits(units, scale),
      };
    }
  }
}
