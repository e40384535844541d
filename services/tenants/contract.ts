/** The tenants service's contract: the types the composition needs, without its router. */
export type { TenantsDeps } from './tenants.deps.ts';
