import type { MikroORM } from '@mikro-orm/postgresql';
import { TenantFairGate } from '../lib/db/tenant-fair-gate.ts';
import { createOrm } from './orm.ts';

/**
 * Connections of the ORM's pool. Its work is reads and management (queries, authentication on a
 * cache miss, operators' tools), never the request path's phases, so a few suffice; more would
 * take from the server's max_connections what the request path's pool may need.
 */
const ORM_POOL_MAX = 4;
/**
 * One tenant's reads on the ORM's pool at once: half of it, so that another tenant's read always
 * finds a connection free of this one's (lib/db/tenant-fair-gate.ts).
 */
const READS_PER_TENANT = ORM_POOL_MAX / 2;
/**
 * One tenant's reads waiting at most; past it a read is TENANT_READS_BUSY (429) at once. Enough
 * for a dashboard's burst of pages; a client with more waiting is only lengthening its own queue.
 */
const READS_QUEUED_PER_TENANT = 32;
/**
 * Connections of the API-key lookups' own pool (TenantsDeps.authOrm). A lookup is one indexed
 * read, and successes are cached (TENANT_CACHE_TTL_MS): two keep a flood of bad keys from
 * queueing for long, and take little from max_connections.
 */
const AUTH_POOL_MAX = 2;

/**
 * The read and management side's connections: the ORM for reads and tools, shared by tenants
 * through a fair gate, and a second one for API-key lookups alone.
 */
export function createReadSide(config: { databaseUrl: string; statementTimeoutMs?: number }): {
  orm: MikroORM;
  authOrm: MikroORM;
  reads: TenantFairGate;
} {
  const orm = createOrm({
    databaseUrl: config.databaseUrl,
    poolMax: ORM_POOL_MAX,
    applicationName: 'payments-services-orm',
    statementTimeoutMs: config.statementTimeoutMs,
  });
  const authOrm = createOrm({
    databaseUrl: config.databaseUrl,
    poolMax: AUTH_POOL_MAX,
    applicationName: 'payments-auth',
    statementTimeoutMs: config.statementTimeoutMs,
  });
  const reads = new TenantFairGate({
    capacity: ORM_POOL_MAX,
    perTenant: READS_PER_TENANT,
    maxQueuedPerTenant: READS_QUEUED_PER_TENANT,
  });
  return { orm, authOrm, reads };
}
