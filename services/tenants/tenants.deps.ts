import type { MikroORM } from '@mikro-orm/postgresql';
import type { Keyring } from '../../lib/crypto/keyring.ts';

/** What the tenants service needs: the process's ORM, one fork per call, and the data keys. */
export interface TenantsDeps {
  orm: MikroORM;
  /**
   * The ORM API-key lookups use, on a pool of their own: a tenant's heavy reads never make
   * another tenant's authentication wait for a connection, and a flood of bad keys never makes
   * anyone's reads wait.
   */
  authOrm: MikroORM;
  /** Keys API-key hashes (HMAC under its "api-key-lookup" subkey, api-keys.ts). */
  keyring: Keyring;
}
