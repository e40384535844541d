import { ledgerRouter } from './ledger/index.ts';
import { notificationsRouter } from './notifications/index.ts';
import { opsRouter } from './ops/index.ts';
import { paymentsRouter } from './payments/index.ts';
import { providerRouter } from './provider/index.ts';
import { systemRouter } from './system/index.ts';
import { tenantsRouter } from './tenants/index.ts';
import type { ServiceContext } from './context.ts';
import { serviceTrpc } from './trpc.ts';

/** The composition's own: every service's router, mounted under the whole context. */
const { router, createCallerFactory } = serviceTrpc<ServiceContext>();

/** Each service's router, by the name SERVICES gives it. */
const SERVICE_ROUTERS = {
  payments: paymentsRouter,
  provider: providerRouter,
  tenants: tenantsRouter,
  ops: opsRouter,
  ledger: ledgerRouter,
  notifications: notificationsRouter,
};

/** Every internal service, as one router: in-process for `npm start`, or at /trpc over HTTP. */
export const appRouter = router({ ...SERVICE_ROUTERS, system: systemRouter });

export type AppRouter = typeof appRouter;

/**
 * What one process serves at /trpc: the routers of the services it runs, and `system`
 * (readiness). A call to a service that runs elsewhere is tRPC's NOT_FOUND here, never a run of
 * it in a process that was not given what it needs (a PSP, its jobs).
 */
export function servedRouter(runs: ReadonlySet<string>) {
  const served = Object.entries(SERVICE_ROUTERS).filter(([name]) => runs.has(name));
  return router({ ...Object.fromEntries(served), system: systemRouter });
}

/**
 * The in-process caller: tRPC's own server-side caller (ADR 0031), so a procedure runs exactly
 * as it does behind /trpc — its middleware, its input parser, its errors. The per-call cost of
 * tRPC's proxy is measured there. A service moved to its own process swaps its caller for a
 * TRPCClient at the composition root; callers of `deps` do not change.
 */
export const createServiceCaller = createCallerFactory(appRouter);
export type ServiceCaller = ReturnType<typeof createServiceCaller>;
