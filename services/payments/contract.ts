/** The payments service's contract: what other services may know of it without its router. */
export { PAYMENT_EVENT_TYPES } from './payment-events.ts';
export type { PaymentsDeps } from './payments.deps.ts';
export { refuseCardNumbers } from './card-number-screen.ts';
/**
 * The largest page `payments(first:)` serves: a larger one is refused rather than clamped, so a
 * client never silently gets less. The gateway's document cost counts a page by it.
 */
export const PAYMENTS_MAX_PAGE_SIZE = 100;
