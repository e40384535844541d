import { withDeadline, type TenantsClient } from './client.ts';

/** An unknown tenant: a mistake in how the tool was called, said in one line, exit 2. */
export class TenantUnknownError extends Error {
  override readonly name = 'TenantUnknownError';
}

/**
 * The tenant `--tenant` names, by its name or its id: the one lookup of every command that
 * takes one, so a tenant is named the same way everywhere and an unknown one is refused before
 * anything is sent on its behalf.
 */
export async function resolveTenant(
  ctx: { tenants: TenantsClient },
  ref: string,
): Promise<{ id: string; name: string }> {
  const tenant = await withDeadline((options) => ctx.tenants.get.query({ tenant: ref }, options));
  if (tenant === null) throw new TenantUnknownError(`no such tenant: ${ref}`);
  return tenant;
}
