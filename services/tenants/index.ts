/** The tenants service's surface: what the rest of the house may import from it. */
export { generateApiKey, upsertTenant } from './api-keys.ts';
export { tenantsRouter } from './tenants.router.ts';
