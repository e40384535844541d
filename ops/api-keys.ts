import type { ApiKeysCommand } from './args.ts';
import { withDeadline } from './client.ts';
import type { Context } from './commands.ts';
import { reportTable, table, timestamp } from './render.ts';
import { resolveTenant } from './tenant-ref.ts';

/** `api-keys create|list|revoke`: a tenant's keys, managed without a restart. */
export async function apiKeys(ctx: Context, command: ApiKeysCommand): Promise<void> {
  const { tenants } = ctx;
  const tenant = await resolveTenant(ctx, command.tenant);
  switch (command.action) {
    case 'create': {
      const key = await withDeadline((options) =>
        tenants.createApiKey.mutate({ tenant: tenant.id, expiresAt: command.expiresAt }, options),
      );
      ctx.print(
        reportTable([
          ['tenant', tenant.name],
          ['id', key.id],
          ['expires', timestamp(key.expiresAt ?? null)],
        ]),
      );
      ctx.print('The API key, shown this once; store it now:');
      ctx.print(key.apiKey);
      return;
    }
    case 'list': {
      const keys = await withDeadline((options) =>
        tenants.listApiKeys.query({ tenant: tenant.id }, options),
      );
      const out = table(['id', 'prefix', 'origin', 'created', 'last used', 'expires', 'revoked']);
      for (const key of keys) {
        out.push([
          key.id,
          key.prefix ?? '(from before api_keys)',
          key.origin,
          timestamp(key.createdAt),
          timestamp(key.lastUsedAt),
          timestamp(key.expiresAt),
          timestamp(key.revokedAt),
        ]);
      }
      ctx.print(out.toString());
      return;
    }
    case 'revoke': {
      const { revoked } = await withDeadline((options) =>
        tenants.revokeApiKey.mutate({ tenant: tenant.id, id: command.id }, options),
      );
      ctx.print(
        revoked
          ? `revoked ${command.id}: gateways refuse it within 5 seconds`
          : `${command.id} was not a live key of ${tenant.name} (unknown, or revoked already)`,
      );
    }
  }
}
