import { z } from 'zod';
import { AppError, LIB_ERRORS } from '../../lib/errors.ts';
import { serviceTrpc } from '../trpc.ts';
import type { TenantsDeps } from './tenants.deps.ts';
import {
  findTenantByApiKey,
  findTenantByName,
  issueApiKey,
  listApiKeys,
  revokeApiKey,
} from './api-keys.ts';

/** Its procedures see only what it declares (tenants.deps.ts), in the whole stack or alone. */
const { router, procedure } = serviceTrpc<{ deps: TenantsDeps }>();

/** Operators name a tenant as BOOTSTRAP_TENANTS does: by name. */
const tenantName = z.string().min(1).max(255);

export const tenantsRouter = router({
  /** The tenant an API key belongs to, or null. Keys are compared by keyed hash only. */
  authenticate: procedure
    .input(z.strictObject({ apiKey: z.string().min(1).max(512) }))
    .query(({ ctx, input }) =>
      findTenantByApiKey(ctx.deps.authOrm.em.fork(), ctx.deps.keyring, input.apiKey),
    ),

  /** A new key for the tenant, optionally expiring; the key is shown in this answer only. */
  createApiKey: procedure
    .input(z.strictObject({ tenant: tenantName, expiresAt: z.iso.datetime().nullish() }))
    .mutation(async ({ ctx, input }) => {
      const em = ctx.deps.orm.em.fork();
      const expiresAt = input.expiresAt == null ? null : new Date(input.expiresAt);
      if (expiresAt !== null && expiresAt.getTime() <= Date.now()) {
        throw new AppError(LIB_ERRORS.BAD_USER_INPUT, {
          message: 'expiresAt must be in the future',
          details: { field: 'expiresAt' },
        });
      }
      const tenantId = (await tenantNamed(em, input.tenant)).id;
      return issueApiKey(em, ctx.deps.keyring, { tenantId, expiresAt });
    }),

  /** The tenant's keys, revoked and expired ones included, without the keys themselves. */
  listApiKeys: procedure
    .input(z.strictObject({ tenant: tenantName }))
    .query(async ({ ctx, input }) => {
      const em = ctx.deps.orm.em.fork();
      return listApiKeys(em, (await tenantNamed(em, input.tenant)).id);
    }),

  /** Revokes a key: gateways stop accepting it within their authentication cache's lifetime. */
  revokeApiKey: procedure
    .input(z.strictObject({ tenant: tenantName, id: z.uuid() }))
    .mutation(async ({ ctx, input }) => {
      const em = ctx.deps.orm.em.fork();
      const tenantId = (await tenantNamed(em, input.tenant)).id;
      return { revoked: await revokeApiKey(em, { tenantId, id: input.id }) };
    }),
});

async function tenantNamed(
  em: Parameters<typeof findTenantByName>[0],
  name: string,
): Promise<{ id: string }> {
  const tenant = await findTenantByName(em, name);
  if (tenant === null) {
    throw new AppError(LIB_ERRORS.BAD_USER_INPUT, {
      message: `no tenant named ${name}`,
      details: { field: 'tenant' },
    });
  }
  return tenant;
}
