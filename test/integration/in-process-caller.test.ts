import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { inProcessCallerFactory } from '../../services/in-process-caller.ts';
import { createServiceCaller, createTrpcCaller } from '../../services/router.ts';
import { procedure, router } from '../../services/trpc.ts';
import { AppError } from '../../services/kernel/errors.ts';
import { paymentOf } from '../support/graphql-client.ts';
import { createPaymentOn, paymentInput, useTestStack } from '../support/test-stack.ts';

/**
 * The request path calls services directly (in-process-caller.ts), not through tRPC's caller.
 * What it must keep: the same answers, the same input refusals and the same thrown shapes as
 * tRPC's own caller, call for call; and no procedure whose middleware it would skip.
 */
const stack = useTestStack('in-process-caller');

/** What a call came to, comparable across callers: its value, or its error's shape. */
async function outcome(call: () => Promise<unknown>) {
  try {
    return { value: await call() };
  } catch (error) {
    if (!(error instanceof TRPCError)) return { notTrpc: String(error) };
    const cause = error.cause;
    return {
      code: error.code,
      cause: cause instanceof AppError ? cause.toPublic() : cause?.constructor.name,
      issues: (cause as { issues?: Array<{ path: unknown }> } | undefined)?.issues?.map(
        (i) => i.path,
      ),
    };
  }
}

describe('the direct in-process caller', () => {
  it('answers, refuses and fails as tRPC’s caller does', async () => {
    const payment = paymentOf(await createPaymentOn(stack, paymentInput('direct-1')));
    const ctx = { deps: stack.app.services.deps };
    const direct = createServiceCaller(ctx);
    const trpc = createTrpcCaller(ctx);
    const tenantId = stack.tenantIds.a;
    const calls: Array<(c: typeof direct) => Promise<unknown>> = [
      (c) => c.payments.get({ tenantId, id: payment.id }),
      (c) => c.payments.get({ tenantId, id: 'no-such-payment' }),
      (c) => c.ledger.balances({ tenantId }),
      (c) => c.system.ready(),
      // Refused by the input schema: BAD_REQUEST, the zod error as its cause.
      (c) => c.payments.get({ tenantId: 'not-a-uuid', id: payment.id }),
      (c) => c.ledger.balances({} as { tenantId: string }),
      // Refused by the procedure itself: an AppError inside a TRPCError.
      (c) => c.tenants.createApiKey({ tenant: 'tenant-a', expiresAt: '2000-01-01T00:00:00.000Z' }),
    ];
    for (const call of calls) {
      const expected = await outcome(() => call(trpc));
      expect(await outcome(() => call(direct))).toEqual(expected);
    }
    const refused = await outcome(() => direct.payments.get({ tenantId: 'x', id: 'y' }));
    expect(refused).toMatchObject({ code: 'BAD_REQUEST', cause: 'ZodError' });
  });

  it('refuses at start a procedure with middleware it would skip', () => {
    const guarded = router({
      ns: router({
        open: procedure.input(z.object({ a: z.string() })).query(() => 'ok'),
        guarded: procedure
          .use(({ next }) => next())
          .input(z.object({ a: z.string() }))
          .query(() => 'ok'),
      }),
    });
    expect(() => inProcessCallerFactory(guarded)).toThrow(/ns\.guarded has middleware/);
    const plain = router({ ns: router({ open: procedure.query(() => 'ok') }) });
    expect(() => inProcessCallerFactory(plain)).not.toThrow();
  });
});
