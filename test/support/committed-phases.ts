import type pg from 'pg';
import { CANCEL_PAYMENT, CANCEL_SPEC } from '../../services/payments/cancel-payment.flow.ts';
import { CAPTURE_PAYMENT, CAPTURE_SPEC } from '../../services/payments/capture-payment.flow.ts';
import {
  CREATE_PAYMENT,
  CREATE_PAYMENT_POINTS,
} from '../../services/payments/create-payment.flow.ts';
import { REFUND_PAYMENT, REFUND_SPEC } from '../../services/payments/refund-payment.flow.ts';

/** The recovery point each operation's admission commits (its flow's first phase). */
const ADMISSION_POINTS: Array<[string, string]> = [
  [CREATE_PAYMENT.id, CREATE_PAYMENT_POINTS.chargeSent],
  [CAPTURE_PAYMENT.id, CAPTURE_SPEC.sentPoint],
  [REFUND_PAYMENT.id, REFUND_SPEC.sentPoint],
  [CANCEL_PAYMENT.id, CANCEL_SPEC.sentPoint],
];

/**
 * Where a request that never advanced was admitted: the point it still stands at while
 * unfinished; once finished, its operation's first point.
 */
const ADMITTED_AT = `CASE WHEN k.state <> 'finished' THEN k.recovery_point ELSE CASE k.operation ${ADMISSION_POINTS.map(
  ([operation, point]) => `WHEN '${operation}' THEN '${point}'`,
).join(' ')} END END`;

/**
 * Every committed phase of every request, as rows of (key, operation, recovery_point,
 * fencing_token, committed_at): the phase log; the admission of a request with no log rows,
 * which its key row records (ADR 0056: admission logs nothing, and the first advance logs it);
 * and the finish each finished key row records (ADR 0054: the finished row's token and
 * updated_at are the finishing owner's).
 */
export const COMMITTED_PHASES = `(
  SELECT key, operation, recovery_point, fencing_token::text AS fencing_token, committed_at
    FROM idempotency_phase_log
  UNION ALL
  SELECT k.key, k.operation, ${ADMITTED_AT}, '1', k.created_at
    FROM idempotency_keys k
   WHERE NOT EXISTS (SELECT FROM idempotency_phase_log l WHERE l.request_id = k.id)
  UNION ALL
  SELECT key, operation, 'finished', fencing_token::text, updated_at
    FROM idempotency_keys WHERE state = 'finished'
) committed_phases`;

/**
 * A key's committed phases, oldest first; of one operation's key when `operation` is given. A
 * phase and the finish committed in one transaction (a refusal at admission) share their time;
 * the finish sorts last.
 */
export async function committedPhases(
  db: pg.Pool,
  key: string,
  operation?: string,
): Promise<Array<{ recovery_point: string; fencing_token: string }>> {
  const { rows } = await db.query<{ recovery_point: string; fencing_token: string }>(
    `SELECT recovery_point, fencing_token FROM ${COMMITTED_PHASES}
      WHERE key = $1 AND ($2::text IS NULL OR operation = $2) ORDER BY committed_at, recovery_point = 'finished'`,
    [key, operation ?? null],
  );
  return rows;
}
