import type { EntityManager } from '@mikro-orm/postgresql';
import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { Tenant } from './tenant.entity.ts';

/** A tenant as an operator or a service names it: by name (BOOTSTRAP_TENANTS) or by id. */
export const tenantRef = z.string().min(1).max(255);

export interface TenantNamed {
  id: string;
  name: string;
}

/**
 * The tenant `ref` names, or null. An id-shaped ref is taken as an id first and then as a name,
 * so a tenant whose name looks like an id is still found by it.
 */
export async function findTenant(em: EntityManager, ref: string): Promise<TenantNamed | null> {
  const fields = ['id', 'name'] as const;
  const byId = z.uuid().safeParse(ref).success
    ? await em.findOne(Tenant, { id: ref }, { fields })
    : null;
  const tenant = byId ?? (await em.findOne(Tenant, { name: ref }, { fields }));
  return tenant === null ? null : { id: tenant.id, name: tenant.name };
}

/**
 * The tenant `ref` names. An unknown one is NOT_FOUND, an answer the caller acts on: never an
 * internal error, which would be a 500 logged with a stack for a typo.
 */
export async function tenantOrNotFound(em: EntityManager, ref: string): Promise<TenantNamed> {
  const tenant = await findTenant(em, ref);
  if (tenant === null)
    throw new TRPCError({ code: 'NOT_FOUND', message: `no such tenant: ${ref}` });
  return tenant;
}
