import { ledgerRouter } from './ledger/index.ts';
import { notificationsRouter } from './notifications/index.ts';
import { opsRouter } from './ops/index.ts';
import { paymentsRouter } from './payments/index.ts';
import { providerRouter } from './provider/index.ts';
import { systemRouter } from './system/index.ts';
import { tenantsRouter } from './tenants/index.ts';
import { createCallerFactory, router } from './trpc.ts';
import { inProcessCallerFactory } from './in-process-caller.ts';

/** Every internal service, as one router: in-process for `npm start`, or at /trpc over HTTP. */
export const appRouter = router({
  payments: paymentsRouter,
  provider: providerRouter,
  tenants: tenantsRouter,
  system: systemRouter,
  ops: opsRouter,
  ledger: ledgerRouter,
  notifications: notificationsRouter,
});

export type AppRouter = typeof appRouter;

/**
 * tRPC's own server-side caller: the type of every in-process caller, and what the direct one
 * below is tested against (test/integration/in-process-caller.test.ts).
 */
export const createTrpcCaller = createCallerFactory(appRouter);
export type ServiceCaller = ReturnType<typeof createTrpcCaller>;

/**
 * In-process calls go straight to each procedure: its input schema, then its resolver, thrown
 * failures shaped as tRPC's caller shapes them, without tRPC's per-call proxy and middleware
 * chain (services/in-process-caller.ts; docs/decisions/0014). A procedure that gains middleware
 * stops the start. A service that moves to its own process swaps its caller for a TRPCClient
 * at the composition root; callers of `deps` do not change.
 */
export const createServiceCaller = inProcessCallerFactory<ServiceCaller>(appRouter);
