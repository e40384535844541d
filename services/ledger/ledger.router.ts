import { z } from 'zod';
import { withTransaction } from '../kernel/db/pool.ts';
import { formatAmount } from '../kernel/money/money.ts';
import { procedure, router } from '../trpc.ts';
import {
  CLAIM_INBOX_MESSAGE,
  INSERT_LINE,
  INSERT_POSTING,
  SELECT_BALANCES,
  SELECT_TRIAL_BALANCE,
} from './ledger.sql.ts';

/** The accounts of a movement: money the PSP holds for us, and what the merchant may pay out. */
const CLEARING_ACCOUNT = 'psp_clearing';
const MERCHANT_ACCOUNT = 'merchant_balance';

const postingInput = z.object({
  tenantId: z.uuid(),
  /** The event this posting comes from: the inbox remembers it. */
  messageId: z.string().min(1).max(255),
  /** The posting's stable identity (ledger_payment_<id>_capture, ledger_refund_<id>). */
  postingId: z.string().regex(/^ledger_[a-z]+_[0-9a-f-]{36}(_[a-z]+)?$/),
  paymentId: z.uuid(),
  kind: z.enum(['capture', 'refund']),
  currency: z.string().regex(/^[A-Z]{3}$/),
  amountMinor: z.string().regex(/^[1-9]\d{0,17}$/),
});

/**
 * The ledger service. A posting is two lines that balance (a capture credits the merchant and
 * debits clearing; a refund the reverse), written in one transaction with the inbox row of the
 * message that caused it. Posting twice — the same message redelivered, or another message for
 * the same movement — is a no-op by the inbox and by the posting id.
 */
export const ledgerRouter = router({
  post: procedure.input(postingInput).mutation(async ({ ctx, input }) => {
    const result = await withTransaction(ctx.deps.pool, async (tx) => {
      const fresh = await tx.query(CLAIM_INBOX_MESSAGE, [
        'ledger',
        input.tenantId,
        input.messageId,
      ]);
      if (fresh.rowCount !== 1) return { posted: false };
      const inserted = await tx.query(INSERT_POSTING, [
        input.tenantId,
        input.postingId,
        input.paymentId,
        input.kind,
        input.currency,
      ]);
      if (inserted.rowCount !== 1) return { posted: false };
      const [debit, credit] =
        input.kind === 'capture'
          ? [CLEARING_ACCOUNT, MERCHANT_ACCOUNT]
          : [MERCHANT_ACCOUNT, CLEARING_ACCOUNT];
      await tx.query(INSERT_LINE, [
        input.tenantId,
        input.postingId,
        1,
        debit,
        input.amountMinor,
        0,
        input.currency,
      ]);
      await tx.query(INSERT_LINE, [
        input.tenantId,
        input.postingId,
        2,
        credit,
        0,
        input.amountMinor,
        input.currency,
      ]);
      return { posted: true };
    });
    // Counted once committed, and only when written: a redelivered movement posts nothing.
    if (result.posted) ctx.deps.metrics.ledgerPostings.inc({ service: 'ledger', kind: input.kind });
    return result;
  }),
  balances: procedure.input(z.object({ tenantId: z.uuid() })).query(async ({ ctx, input }) => {
    const { rows } = await ctx.deps.pool.query<{ currency: string; available_minor: string }>(
      SELECT_BALANCES,
      [input.tenantId],
    );
    return rows.map((r) => ({
      currency: r.currency,
      available: formatAmount(BigInt(r.available_minor), r.currency),
    }));
  }),
  trialBalance: procedure.input(z.object({ tenantId: z.uuid() })).query(async ({ ctx, input }) => {
    const { rows } = await ctx.deps.pool.query<{
      currency: string;
      debits_minor: string;
      credits_minor: string;
    }>(SELECT_TRIAL_BALANCE, [input.tenantId]);
    return rows.map((r) => ({
      currency: r.currency,
      debitsMinor: r.debits_minor,
      creditsMinor: r.credits_minor,
    }));
  }),
});
