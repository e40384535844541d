import { serviceTrpc } from '../trpc.ts';
import type { SystemDeps } from './system.deps.ts';

/** Its procedures see only what it declares (system.deps.ts), in the whole stack or alone. */
const { router, procedure } = serviceTrpc<{ deps: SystemDeps }>();

const MIGRATION_APPLIED = `SELECT 1 FROM mikro_orm_migrations WHERE name = $1`;

export const systemRouter = router({
  /** Ready when the database answers and the newest migration has run. */
  ready: procedure.query(async ({ ctx }) => {
    try {
      const { rowCount } = await ctx.deps.pool.query(MIGRATION_APPLIED, [
        ctx.deps.config.latestMigration,
      ]);
      return { ready: rowCount === 1 };
    } catch {
      return { ready: false };
    }
  }),
});
