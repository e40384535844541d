/** The tenants service's surface: what the rest of the house may import from it. */
export { apiKeyDisplayPrefix, generateApiKey, upsertTenant } from './api-keys.ts';
export { tenantOrNotFound, tenantRef } from './tenant-lookup.ts';
export { tenantsRouter } from './tenants.router.ts';
/** Its tables' entities: the composition lists them (app/entities.ts) for the process's one ORM. */
export { Tenant } from './tenant.entity.ts';
export { ApiKey } from './api-key.entity.ts';
