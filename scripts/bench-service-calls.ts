/**
 * `npm run bench:calls`: the CPU one in-process service call costs the request path, through
 * tRPC's server-side caller and through the direct caller (services/in-process-caller.ts), on a
 * procedure with a createPayment-sized zod input and a resolver that does nothing, so that what
 * remains is the calling machinery and the input's parse. A caller is made per call, as the
 * gateway makes one per request. No network, no database; nothing is asserted.
 */
import { z } from 'zod';
import { inProcessCallerFactory } from '../services/in-process-caller.ts';
import type { ServiceContext } from '../services/context.ts';
import { createCallerFactory, procedure, router } from '../services/trpc.ts';

const CALLS = 200_000;
const ROUNDS = 3;

const input = z.object({
  tenantId: z.uuid(),
  idempotencyKey: z.string().min(1).max(255),
  amount: z.string().regex(/^\d{1,12}(\.\d{1,3})?$/),
  currency: z.string().regex(/^[A-Z]{3}$/),
  paymentMethod: z.string().min(1).max(255),
});
const services = router({
  payments: router({ create: procedure.input(input).mutation(() => Promise.resolve('ok')) }),
});
const trpc = createCallerFactory(services);
const direct = inProcessCallerFactory<ReturnType<typeof trpc>>(services);
const ctx = { deps: {} } as unknown as ServiceContext;
const arg = {
  tenantId: '11111111-2222-4333-8444-555555555555',
  idempotencyKey: 'bench-1',
  amount: '10.00',
  currency: 'EUR',
  paymentMethod: 'pm_card_visa',
};

async function microsecondsPerCall(make: typeof direct): Promise<number> {
  const started = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) await make(ctx).payments.create(arg);
  const used = process.cpuUsage(started);
  return (used.user + used.system) / CALLS;
}

async function main(): Promise<void> {
  // Rounds alternate, so JIT warm-up and drift fall on both; the last round is the steady one.
  let last = { trpc: NaN, direct: NaN };
  for (let round = 0; round < ROUNDS; round++) {
    last = { trpc: await microsecondsPerCall(trpc), direct: await microsecondsPerCall(direct) };
    console.log(
      `round ${round + 1}: tRPC caller ${last.trpc.toFixed(2)} µs, direct ${last.direct.toFixed(2)} µs per call`,
    );
  }
  console.log(`direct ÷ tRPC caller: ${(last.direct / last.trpc).toFixed(2)}`);
}

await main();
