import { z } from 'zod';
import { procedure, router } from '../trpc.ts';
import { findTenantByApiKey } from './api-keys.ts';

export const tenantsRouter = router({
  /** The tenant an API key belongs to, or null. Keys are compared by hash only. */
  authenticate: procedure
    .input(z.object({ apiKey: z.string().min(1).max(512) }))
    .query(({ ctx, input }) => findTenantByApiKey(ctx.deps.orm.em.fork(), input.apiKey)),
});
