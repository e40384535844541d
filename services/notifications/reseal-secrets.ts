import type { Keyring } from '../kernel/crypto/keyring.ts';
import type { Queryable } from '../kernel/db/pool.ts';
import type { ResealBatch } from '../kernel/idempotency/reseal-answers.ts';
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
  const { rows } = await db.query<{ tenant_id: string; id: string; secret: string }>(
    SELECT_SECRETS_TO_RESEAL,
    [keyring.primaryId, after.tenantId, after.endpointId, batch.limit],
  );
  const failures: ResealBatch<SecretCursor>['failures'] = [];
  const writes = {
    tenants: [] as string[],
    ids: [] as string[],
    was: [] as string[],
    sealed: [] as string[],
  };
  for (const row of rows) {
    const ref = { tenantId: row.tenant_id, endpointId: row.id };
    try {
      const secret = openWebhookSecret(keyring, ref, row.secret);
      writes.sealed.push(sealWebhookSecret(keyring, ref, secret));
      writes.tenants.push(row.tenant_id);
      writes.ids.push(row.id);
      writes.was.push(row.secret);
    } catch (error) {
      failures.push({
        row: `secret of webhook endpoint ${row.id}`,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
  const written =
    writes.ids.length === 0
      ? 0
      : ((
          await db.query(WRITE_RESEALED_SECRETS, [
            writes.tenants,
            writes.ids,
            writes.was,
            writes.sealed,
          ])
        ).rowCount ?? 0);
  const last = rows[rows.length - 1];
  return {
    scanned: rows.length,
    resealed: written,
    failures,
    next:
      last === undefined || rows.length < batch.limit
        ? null
        : { tenantId: last.tenant_id, endpointId: last.id },
  };
}

/** Signing secrets counted by the data key that sealed them ('' for secrets in clear). */
export async function secretsByKey(db: Queryable): Promise<Record<string, number>> {
  const { rows } = await db.query<{ key_id: string; n: number }>(COUNT_SECRETS_BY_KEY);
  return Object.fromEntries(rows.map((r) => [r.key_id, r.n]));
}
