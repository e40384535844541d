// The token behaviour table. Each magic token drives one failure mode the gateway must survive;
// keeping the table in one place means a new mode is one row plus one case in the processor.

/** Tokens outside this pattern are malformed requests (400), not unknown cards (402). */
export const PAYMENT_METHOD_PATTERN = /^pm_[A-Za-z0-9_]{1,100}$/;

export type PaymentMethodBehaviour =
  | 'approve'
  | 'decline'
  | 'slow'
  | 'unavailable'
  | 'lost-response'
  | 'timeout'
  | 'unknown-outcome'
  | 'unreachable'
  | 'invalid-method';

const BEHAVIOUR_BY_TOKEN: ReadonlyMap<string, PaymentMethodBehaviour> = new Map([
  ['pm_card_visa', 'approve'],
  ['pm_card_mastercard', 'approve'],
  ['pm_card_declined', 'decline'],
  ['pm_card_slow', 'slow'],
  ['pm_card_unavailable', 'unavailable'],
  ['pm_card_lost_response', 'lost-response'],
  ['pm_card_timeout', 'timeout'],
  ['pm_card_unknown', 'unknown-outcome'],
  ['pm_card_unreachable', 'unreachable'],
]);

/** Well-formed tokens that are not in the table behave like a card the network rejects. */
export function behaviourFor(paymentMethod: string): PaymentMethodBehaviour {
  return BEHAVIOUR_BY_TOKEN.get(paymentMethod) ?? 'invalid-method';
}
