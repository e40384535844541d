import { z } from 'zod';
import type { JsonValue } from '../../lib/canonical-json.ts';
import type { Queryable } from '../../lib/db/pool.ts';
import type { AnswerReader } from '../../lib/idempotency/stored-answer.ts';
import { SELECT_PAYMENT } from './payments.sql.ts';
import type { PaymentRow } from './payment.view.ts';

/**
 * How the payment commands' stored answers are read back across deploys.
 *
 * Versions of the answer shape (every payment command shares them):
 *   v1  { payment } | { payment, refund } | { error }  — payment without captureMethod
 *   v2  the same, and payment.captureMethod
 * A v1 answer is upgraded by reading the payment's capture method, which never changes after
 * the payment is created, so the upgraded answer is the one the first request would have had.
 */
export const PAYMENT_ANSWER_VERSION = 2;

const withPayment = z.looseObject({ payment: z.looseObject({ id: z.string() }) });

export function paymentAnswerReader(
  pool: Queryable,
  answer: { tenantId: string; render: (resourceId: string) => Promise<JsonValue> },
): AnswerReader {
  return {
    upgrades: {
      1: async (body) => {
        const parsed = withPayment.safeParse(body);
        if (!parsed.success) return body; // an error answer: no payment in it
        const { rows } = await pool.query<PaymentRow>(SELECT_PAYMENT, [
          answer.tenantId,
          parsed.data.payment.id,
        ]);
        const payment = rows[0];
        if (payment === undefined) {
          throw new Error(`payment ${parsed.data.payment.id} of a stored answer is missing`);
        }
        return {
          ...parsed.data,
          payment: { ...parsed.data.payment, captureMethod: payment.capture_method },
        };
      },
    },
    render: answer.render,
  };
}

const summary = z.union([
  z.object({ error: z.object({ code: z.string() }) }),
  z.object({ refund: z.object({ status: z.string() }) }),
  z.object({ payment: z.object({ status: z.string() }) }),
]);

/** The outcome kept in a key's metadata: an error code, else the refund's or payment's status. */
export function paymentOutcomeOf(body: JsonValue): string {
  const parsed = summary.safeParse(body);
  if (!parsed.success) return 'unrecognised';
  const data = parsed.data;
  if ('error' in data) return data.error.code;
  if ('refund' in data) return data.refund.status;
  return data.payment.status;
}
