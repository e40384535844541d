import type { NotificationsDeps } from '../notifications/contract.ts';
import type { PaymentsDeps } from '../payments/contract.ts';
import type { TenantsDeps } from '../tenants/contract.ts';

/**
 * What the operators' tools need: they act on payments (re-drive, resolve, reconcile, the
 * reference guard), on notifications' sealed secrets and on tenants by name, so they declare
 * those services' needs; nothing of the gateway's or the provider's adapter.
 */
export interface OpsDeps extends PaymentsDeps, NotificationsDeps, TenantsDeps {
  /** The same deps working for one request (an operator's re-drive starts one). */
  forTrace(trace: Parameters<PaymentsDeps['forTrace']>[0]): OpsDeps;
}
