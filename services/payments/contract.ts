/** The payments service's contract: what other services may know of it without its router. */
export { PAYMENT_EVENT_TYPES } from './payment-events.ts';
export type { PaymentsDeps } from './payments.deps.ts';
