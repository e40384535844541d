import type { PaymentsDeps } from './payments.deps.ts';
import { withTransaction } from '../../lib/db/pool.ts';
import { publicError, type PublicError } from '../../lib/errors.ts';
import { PAYMENT_ERRORS } from './payments.errors.ts';
import {
  GUARDED_REFERENCE_CONSTRAINT,
  SELECT_GUARDED_REFERENCE,
  SELECT_REFERENCE_GUARD,
  SELECT_SHARED_REFERENCE,
  TURN_REFERENCE_GUARD_OFF,
  TURN_REFERENCE_GUARD_ON,
} from './payments.sql.ts';

/**
 * A tenant's reference guard (migrations/0017): when on, no two of its live payments (neither
 * FAILED nor CANCELED) share a `reference`, under any idempotency key; a second one is refused
 * with DUPLICATE_REFERENCE. Off unless an operator turns it on for the tenant.
 */
export async function referenceGuardOf(
  deps: Pick<PaymentsDeps, 'pool'>,
  tenantId: string,
): Promise<boolean> {
  const { rows } = await deps.pool.query<{ reference_guard: boolean }>(SELECT_REFERENCE_GUARD, [
    tenantId,
  ]);
  return rows[0]?.reference_guard ?? false;
}

/**
 * Turns the guard on or off. On, the tenant's live payments claim their references at once,
 * so a payment made before the switch is guarded too; if two of them share a reference the
 * guard cannot hold, nothing changes, and the answer names the reference. A payment admitted
 * in the instant the switch commits may miss it (its INSERT read the setting before): the guard
 * is a merchant's convenience, not a ledger invariant.
 */
export async function setReferenceGuard(
  deps: Pick<PaymentsDeps, 'pool'>,
  change: { tenantId: string; enabled: boolean },
): Promise<{ enabled: boolean; claimed: number } | { sharedReference: string }> {
  try {
    return await withTransaction(deps.pool, async (tx) => {
      const { rows } = await tx.query<{ enabled: boolean; claimed: number }>(
        change.enabled ? TURN_REFERENCE_GUARD_ON : TURN_REFERENCE_GUARD_OFF,
        [change.tenantId],
      );
      return rows[0]!;
    });
  } catch (error) {
    if ((error as { code?: unknown }).code !== '23505') throw error;
    const { rows } = await deps.pool.query<{ reference: string }>(SELECT_SHARED_REFERENCE, [
      change.tenantId,
    ]);
    if (rows[0] === undefined) throw error; // a concurrent payment took one: try again
    return { sharedReference: rows[0].reference };
  }
}

/** Whether `error` is the reference guard refusing a second live payment for a reference. */
export function referenceTaken(error: unknown): boolean {
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  return code === '23505' && constraint === GUARDED_REFERENCE_CONSTRAINT;
}

/** DUPLICATE_REFERENCE, naming the live payment that holds the reference when it still does. */
export async function duplicateReference(
  deps: Pick<PaymentsDeps, 'pool'>,
  target: { tenantId: string; reference: string },
): Promise<PublicError> {
  const { rows } = await deps.pool.query<{ id: string }>(SELECT_GUARDED_REFERENCE, [
    target.tenantId,
    target.reference,
  ]);
  const holder = rows[0]?.id;
  return publicError(
    PAYMENT_ERRORS.DUPLICATE_REFERENCE,
    holder === undefined ? {} : { paymentId: holder },
  );
}
