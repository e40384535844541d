import { z } from 'zod';
import { serviceTrpc } from '../trpc.ts';
import type { PaymentsDeps } from './payments.deps.ts';
import { createPayment } from './create-payment.flow.ts';
import { createPaymentInput } from './create-payment.command.ts';
import { capturePayment } from './capture-payment.flow.ts';
import { cancelPayment } from './cancel-payment.flow.ts';
import { refundPayment } from './refund-payment.flow.ts';
import { operationInput } from './payment-operation.command.ts';
import { getPayment, listPayments, listPaymentsInput } from './payment-queries.ts';

/** Its procedures see only what it declares (payments.deps.ts), in the whole stack or alone. */
const { router, procedure } = serviceTrpc<{ deps: PaymentsDeps }>();

/** The payments service: owns client-key idempotency records and the payment phases. */
export const paymentsRouter = router({
  create: procedure
    .input(createPaymentInput)
    .mutation(({ ctx, input }) => createPayment(ctx.deps, input)),
  capture: procedure
    .input(operationInput.omit({ reason: true }))
    .mutation(({ ctx, input }) => capturePayment(ctx.deps, input)),
  refund: procedure
    .input(operationInput.extend({ amount: z.string() }))
    .mutation(({ ctx, input }) => refundPayment(ctx.deps, input)),
  cancel: procedure
    .input(operationInput.omit({ amount: true, reason: true }))
    .mutation(({ ctx, input }) => cancelPayment(ctx.deps, input)),
  get: procedure
    .input(z.strictObject({ tenantId: z.uuid(), id: z.string() }))
    .query(({ ctx, input }) =>
      ctx.deps.reads.run(input.tenantId, () => getPayment(ctx.deps.orm.em.fork(), input)),
    ),
  list: procedure
    .input(listPaymentsInput)
    .query(({ ctx, input }) =>
      ctx.deps.reads.run(input.tenantId, () =>
        listPayments({ em: ctx.deps.orm.em.fork(), keyring: ctx.deps.keyring }, input),
      ),
    ),
});
