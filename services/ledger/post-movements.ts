import { insertUnlessPresent } from '../../lib/db/insert-unless-present.ts';
import type pg from 'pg';
import { POST_MOVEMENTS } from './ledger.sql.ts';

/** The accounts of a movement: money the PSP holds for us, and what the merchant may pay out. */
const CLEARING_ACCOUNT = 'psp_clearing';
const MERCHANT_ACCOUNT = 'merchant_balance';

export interface Movement {
  tenantId: string;
  /** The posting's stable identity (ledger_payment_<id>_capture, ledger_refund_<id>). */
  postingId: string;
  paymentId: string;
  kind: 'capture' | 'refund';
  currency: string;
  amountMinor: string;
}

/**
 * Posts movements, any number, in one statement and so one transaction: each movement is one
 * posting, debiting one account and crediting another with its amount (a capture credits the
 * merchant and debits clearing; a refund the reverse). A movement posted before posts nothing,
 * whichever message carries it again, nor does the second of two in the same call. Returns what
 * was posted, by posting id and kind.
 */
export async function postMovements(
  db: pg.Pool,
  movements: Movement[],
): Promise<Array<{ postingId: string; kind: 'capture' | 'refund' }>> {
  const column = <K extends keyof Movement>(key: K) => movements.map((m) => m[key]);
  const side = (capture: string, refund: string) =>
    movements.map((m) => (m.kind === 'capture' ? capture : refund));
  const { rows } = await insertUnlessPresent<{ id: string; kind: 'capture' | 'refund' }>(
    db,
    POST_MOVEMENTS,
    [
      column('tenantId'),
      column('postingId'),
      column('paymentId'),
      column('kind'),
      column('currency'),
      column('amountMinor'),
      side(CLEARING_ACCOUNT, MERCHANT_ACCOUNT),
      side(MERCHANT_ACCOUNT, CLEARING_ACCOUNT),
    ],
  );
  return rows.map((r) => ({ postingId: r.id, kind: r.kind }));
}
