import type { Keyring } from '../../lib/crypto/keyring.ts';
import type { Queryable } from '../../lib/db/pool.ts';
import { resealRows, type ResealBatch, type ResealSpec } from '../../lib/crypto/reseal-batch.ts';
import {
  COUNT_SECRETS_BY_KEY,
  SELECT_SECRETS_TO_RESEAL,
  WRITE_RESEALED_SECRETS,
} from './notifications.sql.ts';
import { openWebhookSecret, sealWebhookSecret } from './webhook-secret.ts';

/** Where a re-seal sweep of signing secrets stands: the last endpoint it looked at. */
export interface SecretCursor {
  tenantId: string;
  endpointId: string;
}

const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/**
 * Re-seals up to `limit` webhook signing secrets after `after` under the keyring's first key:
 * secrets in clear (registered before sealing) and secrets under older keys. Compare-and-set
 * per row, no transaction held: safe while deliveries read the same rows.
 */
export async function resealSecrets(
  db: Queryable,
  keyring: Keyring,
  batch: { after: SecretCursor | null; limit: number },
): Promise<ResealBatch<SecretCursor>> {
  const after = batch.after ?? { tenantId: NIL_UUID, endpointId: NIL_UUID };
  const { rows } = await db.query<SecretRow>(SELECT_SECRETS_TO_RESEAL, [
    keyring.primaryId,
    after.tenantId,
    after.endpointId,
    batch.limit,
  ]);
  return resealRows(db, resealSecret(keyring), { rows, limit: batch.limit });
}

interface SecretRow {
  tenant_id: string;
  id: string;
  secret: string;
}

function resealSecret(keyring: Keyring): ResealSpec<SecretRow, SecretCursor> {
  const refOf = (row: SecretRow) => ({ tenantId: row.tenant_id, endpointId: row.id });
  return {
    write: WRITE_RESEALED_SECRETS,
    identity: (row) => [row.tenant_id, row.id],
    stored: (row) => row.secret,
    reseal: (row) =>
      sealWebhookSecret(keyring, refOf(row), openWebhookSecret(keyring, refOf(row), row.secret)),
    describe: (row) => `secret of webhook endpoint ${row.id}`,
    cursorOf: refOf,
  };
}

/** Signing secrets counted by the data key that sealed them ('' for secrets in clear). */
export async function secretsByKey(db: Queryable): Promise<Record<string, number>> {
  const { rows } = await db.query<{ key_id: string; n: number }>(COUNT_SECRETS_BY_KEY);
  return Object.fromEntries(rows.map((r) => [r.key_id, r.n]));
}
