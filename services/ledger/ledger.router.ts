import { z } from 'zod';
import { formatAmount } from '../../lib/money/money.ts';
import { serviceTrpc } from '../trpc.ts';
import type { LedgerDeps } from './ledger.deps.ts';
import { BATCH_SIZE } from '../../lib/outbox/dispatcher.ts';
import { postMovements, type Movement } from './post-movements.ts';
import { SELECT_BALANCES, SELECT_TRIAL_BALANCE } from './ledger.sql.ts';

/** Its procedures see only what it declares (ledger.deps.ts), in the whole stack or alone. */
const { router, procedure } = serviceTrpc<{ deps: LedgerDeps }>();

const postingInput = z.strictObject({
  tenantId: z.uuid(),
  // The event the movement comes from, which callers from before ADR 0049 send: accepted and
  // not stored, since the posting id is the movement's identity.
  messageId: z.string().min(1).max(255).optional(),
  postingId: z.string().regex(/^ledger_[a-z]+_[0-9a-f-]{36}(_[a-z]+)?$/),
  paymentId: z.uuid(),
  kind: z.enum(['capture', 'refund']),
  currency: z.string().regex(/^[A-Z]{3}$/),
  amountMinor: z.string().regex(/^[1-9]\d{0,17}$/),
});

/** Posts, and counts what was posted once it has committed: a redelivered movement posts nothing. */
async function post(ctx: { deps: LedgerDeps }, movements: Movement[]) {
  const posted = await postMovements(ctx.deps.pool, movements);
  for (const { kind } of posted) ctx.deps.metrics.ledgerPostings.inc({ service: 'ledger', kind });
  return posted;
}

/**
 * The ledger service. A posting is one entry, a debit and a credit of one amount that balance
 * by construction (post-movements.ts, ADR 0058). Posting twice — the same message redelivered,
 * or another message for the same movement — is a no-op by the posting id.
 */
export const ledgerRouter = router({
  post: procedure
    .input(postingInput)
    .mutation(async ({ ctx, input }) => ({ posted: (await post(ctx, [input])).length === 1 })),
  /** A claim's movements at once, as the outbox delivers them: one transaction for them all. */
  postMany: procedure
    .input(z.array(postingInput).min(1).max(BATCH_SIZE))
    .mutation(async ({ ctx, input }) => ({ posted: await post(ctx, input) })),
  balances: procedure
    .input(z.strictObject({ tenantId: z.uuid() }))
    .query(async ({ ctx, input }) => {
      const { rows } = await ctx.deps.pool.query<{
        currency: string;
        available_minor: string;
        pending_minor: string;
        as_of: Date;
      }>(SELECT_BALANCES, [input.tenantId]);
      return rows.map((r) => ({
        currency: r.currency,
        available: formatAmount(BigInt(r.available_minor), r.currency),
        pending: formatAmount(BigInt(r.pending_minor), r.currency),
        // Whole milliseconds, rounded down: the statement's instant is a millisecond short of
        // the oldest unposted change, so this stays before it too.
        asOf: r.as_of.toISOString(),
      }));
    }),
  trialBalance: procedure
    .input(z.strictObject({ tenantId: z.uuid() }))
    .query(async ({ ctx, input }) => {
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
