import type { TxClient } from '../../lib/db/pool.ts';
import { OwnedRequest } from '../../lib/idempotency/owned-request.ts';
import type { OwnedRow } from '../../lib/idempotency/types.ts';
import { CREATE_PAYMENT } from '../../services/payments/create-payment.flow.ts';
import type { TestStack } from './test-stack.ts';

/** A payment's key row as a test reads it back to build its owner (a RETURNING of these columns). */
export interface PaymentKeyRow {
  id: string;
  fencing_token: string;
  recovery_point: string;
  resource_id: string;
  expires_at: Date;
}

/**
 * An owner of tenant A's createPayment `key` as the engine holds one, from a key row read back
 * (with the token, point or expiry a test chooses): for tests of an owner that has lost its
 * request without knowing it (a zombie, a row moved under it). Its statements are the engine's
 * own, fenced as any owner's are.
 */
export function createPaymentOwnerOf(
  stack: TestStack,
  key: string,
  row: Pick<OwnedRow, 'id' | 'fencing_token' | 'recovery_point' | 'resource_id' | 'expires_at'>,
): OwnedRequest {
  return new OwnedRequest(
    stack.app.services.deps.engine.deps,
    { tenantId: stack.tenantIds.a, operation: CREATE_PAYMENT, key },
    { ...row, operation: CREATE_PAYMENT.id, created_at: new Date() },
  );
}

/**
 * A phase's business write: the payment's description set to `text`. Found on the payment if
 * and only if the phase committed.
 */
export function describePaymentAs(paymentId: string, text: string) {
  return async (tx: TxClient): Promise<void> => {
    await tx.query('UPDATE payments SET description = $2 WHERE id = $1', [paymentId, text]);
  };
}
