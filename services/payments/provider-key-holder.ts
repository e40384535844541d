import type { Queryable } from '../../lib/db/pool.ts';
import { publicError, type PublicError } from '../../lib/errors.ts';
import { PAYMENT_ERRORS } from './payments.errors.ts';
import {
  PROVIDER_KEY_CONSTRAINT,
  SELECT_OPERATION_BY_PROVIDER_KEY,
  SELECT_PAYMENT_BY_PROVIDER_KEY,
} from './payments.sql.ts';

/**
 * Who already holds the provider key a request derives (provider-keys.ts), when its own record
 * is gone:
 * - made before the replay window began: the client reused its key for the same request after
 *   the window, which the contract lets us treat as new: derive the key again, after this
 *   holder's id (`next`);
 * - made within the window: our record of the request was lost (a failover, a restore), not
 *   expired. The request was carried out already; answer so (REQUEST_ALREADY_APPLIED), never
 *   a second charge or refund.
 */
export type KeyHolder =
  { kind: 'none' } | { kind: 'expired'; id: string } | { kind: 'applied'; error: PublicError };

/** The provider key a request derives, and the request's scope (its key rows, if any left). */
export interface KeyTarget {
  tenantId: string;
  providerKey: string;
  /** The replay window, IDEMPOTENCY_TTL_SECONDS. */
  ttlSeconds: number;
  /** The ids the operation's keys are stored under (scopeIdsOf). */
  operationIds: string[];
  clientKey: string;
}

function valuesOf(target: KeyTarget): unknown[] {
  return [
    target.tenantId,
    target.providerKey,
    target.ttlSeconds,
    target.operationIds,
    target.clientKey,
  ];
}

/** At most this many earlier generations of one request are stepped over. */
export const MAX_KEY_GENERATIONS = 32;

export async function paymentHoldingKey(db: Queryable, target: KeyTarget): Promise<KeyHolder> {
  const { rows } = await db.query<{ id: string; past_window: boolean }>(
    SELECT_PAYMENT_BY_PROVIDER_KEY,
    valuesOf(target),
  );
  const holder = rows[0];
  if (holder === undefined) return { kind: 'none' };
  if (holder.past_window) return { kind: 'expired', id: holder.id };
  return { kind: 'applied', error: alreadyApplied(holder.id) };
}

export async function operationHoldingKey(db: Queryable, target: KeyTarget): Promise<KeyHolder> {
  const { rows } = await db.query<{ id: string; payment_id: string; past_window: boolean }>(
    SELECT_OPERATION_BY_PROVIDER_KEY,
    valuesOf(target),
  );
  const holder = rows[0];
  if (holder === undefined) return { kind: 'none' };
  if (holder.past_window) return { kind: 'expired', id: holder.id };
  return { kind: 'applied', error: alreadyApplied(holder.payment_id) };
}

function alreadyApplied(paymentId: string): PublicError {
  return publicError(PAYMENT_ERRORS.REQUEST_ALREADY_APPLIED, { paymentId });
}

/** Whether `error` is a payment's INSERT meeting the payment its provider key already names. */
export function providerKeyTaken(error: unknown): boolean {
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  return code === '23P01' && constraint === PROVIDER_KEY_CONSTRAINT;
}

/**
 * Thrown from inside an operation's admission, so its transaction rolls back and nothing is
 * stored for the key: the request was carried out already (see KeyHolder).
 */
export class RequestAlreadyApplied extends Error {
  constructor(readonly error: PublicError) {
    super(error.message);
  }
}
