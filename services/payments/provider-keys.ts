import { createHmac } from 'node:crypto';
import { canonicalJson, type JsonValue } from '../../lib/canonical-json.ts';
import type { Queryable } from '../../lib/db/pool.ts';
import { SELECT_PROVIDER_KEY_SECRET } from './payments.sql.ts';

/**
 * The idempotency key a charge, capture, void or refund is sent to the provider under, derived
 * from the logical request: the tenant, the operation's lineage (the same across its versions),
 * the client's idempotency key and the normalised command, under a secret of the database's
 * own (migrations/0018, ADR 0029).
 *
 * Why not from our own ids, as before: a payment id is random, drawn per attempt. If the rows
 * of an acknowledged request vanish (a failover with asynchronous replication, a restore from
 * a backup), the client's retry is admitted anew with a new id, and a key derived from it
 * would make the provider charge again. Derived from the request, the retry presents the key
 * the provider already knows, and gets the charge it already made.
 *
 * - Keyed (HMAC-SHA256): the client's key and the command never reach the provider in clear,
 *   and a guess of them cannot be confirmed from a provider key.
 * - Stored with the row (payments.provider_key, payment_operations.provider_key) when it is
 *   admitted: every later call, resumption and probe reads it from there, so rows written
 *   before this scheme keep the key they were sent under.
 * - `after`: the same request again after its replay window is a new request (the contract
 *   lets a key be treated as new then). Its key is derived once more, after the id of the
 *   payment or operation that holds the plain one (provider-key-holder.ts), so it is as
 *   stable under a lost row as the first.
 */
export function providerRequestKey(
  secret: Buffer,
  request: {
    subject: 'payment' | 'capture' | 'void' | 'refund';
    tenantId: string;
    lineage: string;
    clientKey: string;
    command: JsonValue;
    after?: string;
  },
): string {
  const { subject, tenantId, lineage, clientKey, command, after } = request;
  const derivedFrom = { tenantId, operation: lineage, key: clientKey, command };
  const mac = createHmac('sha256', secret)
    .update(canonicalJson(after === undefined ? derivedFrom : { ...derivedFrom, after }))
    .digest('base64url');
  return `provider_${subject}_${mac}`;
}

/**
 * The database's provider-key secret, read once per process on first use. Not a module-level
 * cache: the payments service's composition owns one, so two stacks in one process (tests) on
 * two databases never share a secret.
 */
export class ProviderKeySecret {
  private secret: Promise<Buffer> | undefined;

  constructor(private readonly pool: Queryable) {}

  get(): Promise<Buffer> {
    this.secret ??= this.pool
      .query<{ secret: Buffer }>(SELECT_PROVIDER_KEY_SECRET)
      .then(({ rows }) => {
        const secret = rows[0]?.secret;
        if (secret === undefined) throw new Error('provider_key_secret has no row: migrate first');
        return secret;
      })
      .catch((error: unknown) => {
        this.secret = undefined; // a database that was down: ask again next time
        throw error;
      });
    return this.secret;
  }
}
