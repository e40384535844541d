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
 *   v3  the same, and payment.description, metadata, version and updatedAt (ADR 0041)
 * A v1 answer is upgraded by reading the payment's capture method, and a v2 answer by reading
 * its description and metadata: none of them ever changes after the payment is created, so the
 * upgraded answer is the one the first request would have had. Which state a v2 answer shows was
 * never recorded: it gets version 0, older than every counted state (payments start at 1), and
 * for updatedAt the instant its request was first received, a lower bound (the state it shows
 * was entered by that request or after it, and before the answer was stored).
 */
export const PAYMENT_ANSWER_VERSION = 3;

/** The version of a state an answer stored before versions were counted shows. */
export const UNCOUNTED_VERSION = 0;

const withPayment = z
  .object({ payment: z.object({ id: z.string() }).catchall(z.json()) })
  .catchall(z.json());

export function paymentAnswerReader(
  pool: Queryable,
  answer: {
    tenantId: string;
    /** When the key's first request came: the lower bound a v2 answer's updatedAt gets. */
    firstRequestAt: Date;
    render: (resourceId: string) => Promise<JsonValue>;
  },
): AnswerReader {
  /** Adds what the payment's row says to a stored answer's payment; an error answer as it is. */
  const withRow = async (
    body: JsonValue,
    fields: (row: PaymentRow) => Record<string, JsonValue>,
  ): Promise<JsonValue> => {
    const parsed = withPayment.safeParse(body);
    if (!parsed.success) return body; // an error answer: no payment in it
    const { id } = parsed.data.payment;
    const { rows } = await pool.query<PaymentRow>(SELECT_PAYMENT, [answer.tenantId, id]);
    const payment = rows[0];
    if (payment === undefined) throw new Error(`payment ${id} of a stored answer is missing`);
    return { ...parsed.data, payment: { ...parsed.data.payment, ...fields(payment) } };
  };
  return {
    upgrades: {
      1: (body) => withRow(body, (row) => ({ captureMethod: row.capture_method })),
      2: (body) =>
        withRow(body, (row) => ({
          description: row.description,
          metadata: row.metadata,
          version: UNCOUNTED_VERSION,
          updatedAt: answer.firstRequestAt.toISOString(),
        })),
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
