import { ledgerRouter } from './ledger/index.ts';
import { notificationsRouter } from './notifications/index.ts';
import { opsRouter } from './ops/index.ts';
import { paymentsRouter } from './payments/index.ts';
import { providerRouter } from './provider/index.ts';
import { systemRouter } from './system/index.ts';
import { tenantsRouter } from './tenants/index.ts';
import { createCallerFactory, router } from './trpc.ts';

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
 * The in-process caller: tRPC's own server-side caller (ADR 0031), so a procedure runs exactly
 * as it does behind /trpc — its middleware, its input parser, its errors. The per-call cost of
 * tRPC's proxy is measured there. A service moved to its own process swaps its caller for a
 * TRPCClient at the composition root; callers of `deps` do not change.
 */
export const createServiceCaller = createCallerFactory(appRouter);
export type ServiceCaller = ReturnType<typeof createServiceCaller>;
