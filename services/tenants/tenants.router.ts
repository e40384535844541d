import { z } from 'zod';
import { AppError, LIB_ERRORS } from '../../lib/errors.ts';
import { serviceTrpc } from '../trpc.ts';
import type { TenantsDeps } from './tenants.deps.ts';
import { findTenantByApiKey, issueApiKey, listApiKeys, revokeApiKey } from './api-keys.ts';
import { findTenant, tenantOrNotFound, tenantRef } from './tenant-lookup.ts';

/** Its procedures see only what it declares (tenants.deps.ts), in the whole stack or alone. */
const { router, procedure } = serviceTrpc<{ deps: TenantsDeps }>();

export const tenantsRouter = router({
  /** The tenant an API key belongs to, or null. Keys are compared by keyed hash only. */
  authenticate: procedure
    .input(z.strictObject({ apiKey: z.string().min(1).max(512) }))
    .query(({ ctx, input }) =>
      findTenantByApiKey(ctx.deps.authOrm.em.fork(), ctx.deps.keyring, input.apiKey),
    ),

  /** The tenant a name or an id names, or null: where a caller finds a tenant's id. */
  get: procedure
    .input(z.strictObject({ tenant: tenantRef }))
    .query(({ ctx, input }) => findTenant(ctx.deps.orm.em.fork(), input.tenant)),

  /** A new key for the tenant, optionally expiring; the key is shown in this answer only. */
  createApiKey: procedure
    .input(z.strictObject({ tenant: tenantRef, expiresAt: z.iso.datetime().nullish() }))
    .mutation(async ({ ctx, input }) => {
      const em = ctx.deps.orm.em.fork();
      const expiresAt = input.expiresAt == null ? null : new Date(input.expiresAt);
      if (expiresAt !== null && expiresAt.getTime() <= Date.now()) {
        throw new AppError(LIB_ERRORS.BAD_USER_INPUT, {
          message: 'expiresAt must be in the future',
          details: { field: 'expiresAt' },
        });
      }
      const tenantId = (await tenantOrNotFound(em, input.tenant)).id;
      return issueApiKey(em, ctx.deps.keyring, { tenantId, expiresAt });
    }),

  /** The tenant's keys, revoked and expired ones included, without the keys themselves. */
  listApiKeys: procedure
    .input(z.strictObject({ tenant: tenantRef }))
    .query(async ({ ctx, input }) => {
      const em = ctx.deps.orm.em.fork();
      return listApiKeys(em, (await tenantOrNotFound(em, input.tenant)).id);
    }),

  /** Revokes a key: gateways stop accepting it within their authentication cache's lifetime. */
  revokeApiKey: procedure
    .input(z.strictObject({ tenant: tenantRef, id: z.uuid() }))
    .mutation(async ({ ctx, input }) => {
      const em = ctx.deps.orm.em.fork();
      const tenantId = (await tenantOrNotFound(em, input.tenant)).id;
      return { revoked: await revokeApiKey(em, { tenantId, id: input.id }) };
    }),
});
