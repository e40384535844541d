import { GATEWAY_ERRORS } from '../gateway/gateway.errors.ts';
import { composeErrorCatalog, LIB_ERRORS, type ErrorCatalog } from '../lib/errors.ts';
import { NOTIFICATION_ERRORS } from '../services/notifications/index.ts';
import { PAYMENT_ERRORS } from '../services/payments/index.ts';

/**
 * The one error catalog: every code a client can see, with its HTTP status and whether it is
 * stored for the key. The README's error table (docs/api.md §3.1) is generated from it.
 */
export const ERROR_CATALOG: ErrorCatalog = composeErrorCatalog(
  GATEWAY_ERRORS,
  LIB_ERRORS,
  PAYMENT_ERRORS,
  NOTIFICATION_ERRORS,
);
