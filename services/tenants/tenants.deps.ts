import type { MikroORM } from '@mikro-orm/postgresql';
import type { Keyring } from '../../lib/crypto/keyring.ts';

/** What the tenants service needs: the process's ORM, one fork per call, and the data keys. */
export interface TenantsDeps {
  orm: MikroORM;
  /** Keys API-key hashes (HMAC under its "api-key-lookup" subkey, api-keys.ts). */
  keyring: Keyring;
}
