import { createHmac } from 'node:crypto';
import { canonicalJson, type JsonValue } from '../kernel/canonical-json.ts';
import type { Queryable } from '../kernel/db/pool.ts';
import { publicError, type PublicError } from '../kernel/errors.ts';
import type { PaymentsDeps } from '../context.ts';
import { PAYMENT_ERRORS } from './payments.errors.ts';
import {
  PROVIDER_KEY_CONSTRAINT,
  SELECT_PAYMENT_BY_PROVIDER_KEY,
  SELECT_PROVIDER_KEY_SECRET,
} from './payments.sql.ts';

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
 * - The same request under the same key after our record of it expired gets the provider's
 *   memory of it, not a second charge: a payment is refused as already made
 *   (REQUEST_ALREADY_APPLIED), never charged twice.
 */
export function providerRequestKey(
  secret: Buffer,
  request: {
    subject: 'payment' | 'capture' | 'void' | 'refund';
    tenantId: string;
    lineage: string;
    clientKey: string;
    command: JsonValue;
  },
): string {
  const { subject, tenantId, lineage, clientKey, command } = request;
  const mac = createHmac('sha256', secret)
    .update(canonicalJson({ tenantId, operation: lineage, key: clientKey, command }))
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

/** Whether `error` is a payment's INSERT meeting the payment its provider key already names. */
export function providerKeyTaken(error: unknown): boolean {
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  return code === '23505' && constraint === PROVIDER_KEY_CONSTRAINT;
}

/** REQUEST_ALREADY_APPLIED, naming the payment the request made the first time. */
export async function requestAlreadyApplied(
  deps: Pick<PaymentsDeps, 'pool'>,
  target: { tenantId: string; providerKey: string },
): Promise<PublicError> {
  const { rows } = await deps.pool.query<{ id: string }>(SELECT_PAYMENT_BY_PROVIDER_KEY, [
    target.tenantId,
    target.providerKey,
  ]);
  const made = rows[0]?.id;
  return publicError(
    PAYMENT_ERRORS.REQUEST_ALREADY_APPLIED,
    made === undefined ? {} : { paymentId: made },
  );
}
