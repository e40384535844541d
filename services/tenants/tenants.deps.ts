import type { MikroORM } from '@mikro-orm/postgresql';

/** What the tenants service needs: the process's ORM, one fork per call. */
export interface TenantsDeps {
  orm: MikroORM;
}
