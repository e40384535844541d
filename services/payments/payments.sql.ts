/** The payments service's statements. Every one filters by tenant_id first. */
import { failUnless, type Check } from '../../lib/db/failed-checks.ts';

/** The payments service's own checks (PW1xx; lib's are PW0xx). */
export const PAYMENT_CHECKS = {
  /** The payment was no longer PROCESSING when its charge outcome was recorded. */
  paymentNotProcessing: {
    sqlstate: 'PW101',
    message: 'the payment left PROCESSING before its outcome',
  },
} as const satisfies Record<string, Check>;

const PAYMENT_COLUMNS = `
  id, status, amount_minor, currency, amount_captured_minor, amount_refunded_minor,
  payment_method, capture_method, reference, description, metadata, provider_key,
  provider_reference, failure_code, created_at, updated_at, version`;

/**
 * Every change a payment's answers show moves its version on by one and its updated_at to now,
 * never back (ADR 0041): an answer's (version, updatedAt) orders it among the payment's states,
 * so a client cache can tell a replayed answer from a newer state. A statement that changes what
 * the API shows of a payment and leaves these alone lets an older answer pass for a newer one.
 */
const NEXT_VERSION = `version = version + 1, updated_at = greatest(now(), updated_at)`;

/** $1 tenant, $2 id, $3 amount minor, $4 currency, $5 payment method, $6 capture method,
 * $7 reference, $8 description, $9 metadata, $10 provider key (the durable intent).
 * Returns the row, so the owner goes on without reading it back. With the tenant's reference
 * guard on, the reference is claimed too (guarded_reference, migrations/0017): a live payment
 * of the tenant holding it already fails the statement on payments_guarded_reference_uq. */
export const INSERT_PAYMENT = `
INSERT INTO payments (tenant_id, id, status, amount_minor, currency, payment_method, capture_method,
                      reference, description, metadata, provider_key, guarded_reference)
VALUES ($1, $2, 'PROCESSING', $3, $4, $5, $6, $7, $8, $9, $10,
        CASE WHEN (SELECT reference_guard FROM payment_settings WHERE tenant_id = $1) THEN $7 END)
RETURNING ${PAYMENT_COLUMNS}`;

/** The reference guard's unique index: a violation of it is DUPLICATE_REFERENCE. */
export const GUARDED_REFERENCE_CONSTRAINT = 'payments_guarded_reference_uq';

/** The live payment holding a guarded reference. $1 tenant, $2 reference. */
export const SELECT_GUARDED_REFERENCE = `
SELECT id FROM payments WHERE tenant_id = $1 AND guarded_reference = $2`;

/** An ended payment gives its guarded reference up (the value `status` $n is set to). */
const releasingGuardedReference = (status: string) =>
  `guarded_reference = CASE WHEN ${status}::text IN ('FAILED', 'CANCELED') THEN NULL ELSE guarded_reference END`;

/** $1 tenant, $2 id. */
export const SELECT_PAYMENT = `
SELECT ${PAYMENT_COLUMNS} FROM payments WHERE tenant_id = $1 AND id = $2`;

/** $1 tenant, $2 id, $3 status, $4 amount captured minor, $5 provider reference, $6 failure code,
 * $7 updated_at: the instant the stored answer shows, which is sealed before this statement runs
 * in the same round trip (create-payment.finish.ts), so the row is given it rather than now().
 * Only from PROCESSING: an outcome is recorded once, and a payment found in any other status
 * fails the statement (PAYMENT_CHECKS.paymentNotProcessing), so its phase commits nothing. */
export const RECORD_CHARGE_OUTCOME = `
WITH recorded AS (
  UPDATE payments
     SET status = $3, amount_captured_minor = $4, provider_reference = $5, failure_code = $6,
         ${releasingGuardedReference('$3')}, version = version + 1, updated_at = $7
   WHERE tenant_id = $1 AND id = $2 AND status = 'PROCESSING'
  RETURNING 1
)
SELECT ${failUnless('EXISTS (SELECT 1 FROM recorded)', PAYMENT_CHECKS.paymentNotProcessing)}`;

/** The payment an operation acts on, locked for the admission transaction: operations on one
 * payment (a capture and a cancel, two captures) are decided one after the other. $1 tenant, $2 id. */
export const SELECT_PAYMENT_FOR_UPDATE = `
SELECT ${PAYMENT_COLUMNS} FROM payments WHERE tenant_id = $1 AND id = $2 FOR UPDATE`;

/** Whether the payment is already captured or canceled, or being so. $1 tenant, $2 payment id. */
export const SELECT_ACTIVE_SETTLEMENT = `
SELECT kind FROM payment_operations
 WHERE tenant_id = $1 AND payment_id = $2 AND kind IN ('capture', 'cancel') AND status <> 'FAILED'`;

/** $1 tenant, $2 id, $3 payment id, $4 kind, $5 amount minor, $6 provider key (the intent),
 * $7 reason. */
export const INSERT_OPERATION = `
INSERT INTO payment_operations (tenant_id, id, payment_id, kind, amount_minor, status, provider_key, reason)
VALUES ($1, $2, $3, $4, $5, 'PROCESSING', $6, $7)
RETURNING id, payment_id, kind, amount_minor, provider_key, reason, status, created_at`;

/** $1 tenant, $2 id. */
export const SELECT_OPERATION = `
SELECT id, payment_id, kind, amount_minor, provider_key, reason, status, created_at
  FROM payment_operations WHERE tenant_id = $1 AND id = $2`;

/** $1 tenant, $2 id, $3 status, $4 failure code, $5 provider reference. Only from PROCESSING:
 * an outcome is recorded once. */
export const RECORD_OPERATION_OUTCOME = `
UPDATE payment_operations SET status = $3, failure_code = $4, provider_reference = $5, updated_at = now()
 WHERE tenant_id = $1 AND id = $2 AND status = 'PROCESSING'`;

/** A capture or cancel applied to the payment. $1 tenant, $2 id, $3 new status, $4 captured minor. */
export const APPLY_SETTLEMENT = `
UPDATE payments SET status = $3, amount_captured_minor = $4, ${releasingGuardedReference('$3')},
       ${NEXT_VERSION}
 WHERE tenant_id = $1 AND id = $2 AND status = 'REQUIRES_CAPTURE'
RETURNING ${PAYMENT_COLUMNS}`;

/** Refunds of some payments, oldest first. $1 tenant, $2 payment ids. */
export const SELECT_REFUNDS = `
SELECT id, payment_id, amount_minor, status, reason, created_at
  FROM payment_operations
 WHERE tenant_id = $1 AND payment_id = ANY($2) AND kind = 'refund'
 ORDER BY created_at, id`;

/** What is still refundable: captured minus refunds done or in flight. $1 tenant, $2 payment id,
 * $3 captured minor. Run under the payment's row lock, so concurrent refunds see each other. */
export const SELECT_REFUNDABLE = `
SELECT $3::bigint - COALESCE(sum(amount_minor), 0) AS refundable_minor
  FROM payment_operations
 WHERE tenant_id = $1 AND payment_id = $2 AND kind = 'refund' AND status <> 'FAILED'`;

/** A refund applied to the payment. $1 tenant, $2 id, $3 refunded minor. */
export const APPLY_REFUND = `
UPDATE payments SET amount_refunded_minor = amount_refunded_minor + $3, ${NEXT_VERSION}
 WHERE tenant_id = $1 AND id = $2
RETURNING ${PAYMENT_COLUMNS}`;

/**
 * A change to what the payment shows that is not in its own row: a refund made (it joins the
 * payment's refunds, PROCESSING) or refused (it turns FAILED there). $1 tenant, $2 id.
 */
export const NEXT_PAYMENT_VERSION = `
UPDATE payments SET ${NEXT_VERSION} WHERE tenant_id = $1 AND id = $2`;

/**
 * Turns a tenant's reference guard on or off, and makes its payments' claims agree: on, every
 * live payment with a reference claims it (two live payments sharing one fail the statement on
 * payments_guarded_reference_uq, and nothing changes); off, every claim is dropped. One
 * statement, so the setting and the claims commit together. $1 tenant. One text for each way:
 * the pool plans once for any values (lib/db/pool.ts, PlanCacheMode), and a plan made for both
 * would visit every payment of the tenant to drop the few claims the partial index holds.
 */
function setReferenceGuard(on: boolean): string {
  return `
WITH setting AS (
  INSERT INTO payment_settings (tenant_id, reference_guard) VALUES ($1, ${on})
  ON CONFLICT ON CONSTRAINT payment_settings_pk
  DO UPDATE SET reference_guard = EXCLUDED.reference_guard, updated_at = now()
  RETURNING reference_guard
), claims AS (
  UPDATE payments
     SET guarded_reference = ${on ? 'reference' : 'NULL'}
   WHERE tenant_id = $1
     AND ${on ? "reference IS NOT NULL AND status NOT IN ('FAILED', 'CANCELED')" : 'guarded_reference IS NOT NULL'}
  RETURNING 1
)
SELECT (SELECT reference_guard FROM setting) AS enabled, (SELECT count(*)::int FROM claims) AS claimed`;
}

export const TURN_REFERENCE_GUARD_ON = setReferenceGuard(true);
export const TURN_REFERENCE_GUARD_OFF = setReferenceGuard(false);

/** $1 tenant. No row: the guard is off. */
export const SELECT_REFERENCE_GUARD = `
SELECT reference_guard FROM payment_settings WHERE tenant_id = $1`;

/** Two of the tenant's live payments that share a reference, if any. $1 tenant. */
export const SELECT_SHARED_REFERENCE = `
SELECT reference FROM payments
 WHERE tenant_id = $1 AND reference IS NOT NULL AND status NOT IN ('FAILED', 'CANCELED')
 GROUP BY reference HAVING count(*) > 1
 LIMIT 1`;

/** The secret provider keys are derived under (provider-keys.ts, migrations/0018). */
export const SELECT_PROVIDER_KEY_SECRET = `SELECT secret FROM provider_key_secret WHERE id = 1`;

/** The provider key's unique index: a violation of it is REQUEST_ALREADY_APPLIED. */
export const PROVIDER_KEY_CONSTRAINT = 'payments_provider_key_uq';

/**
 * The payment that already holds a provider key (the request it was made for came again), and
 * whether the request that made it is past its replay window: its key row says it expired
 * (metadata outlives answers), or, that row gone too, the payment is older than the window
 * ($3 seconds). Then the request is a key reused after its window, which the contract lets us
 * treat as new. Otherwise the request's record was lost, not expired. ($4: the operation's ids,
 * $5: the client's key; the lookup uses the keys' (tenant, operation, key) index.)
 */
export const SELECT_PAYMENT_BY_PROVIDER_KEY = `
SELECT p.id,
       (p.created_at < now() - make_interval(secs => $3)
        OR EXISTS (SELECT FROM idempotency_keys k
                    WHERE k.tenant_id = $1 AND k.operation = ANY($4::text[]) AND k.key = $5
                      AND k.resource_id = p.id AND k.expires_at <= now())) AS past_window
  FROM payments p WHERE p.tenant_id = $1 AND p.provider_key = $2`;

/** The same for a capture, void or refund: the operation holding the key, and its payment. */
export const SELECT_OPERATION_BY_PROVIDER_KEY = `
SELECT o.id, o.payment_id,
       (o.created_at < now() - make_interval(secs => $3)
        OR EXISTS (SELECT FROM idempotency_keys k
                    WHERE k.tenant_id = $1 AND k.operation = ANY($4::text[]) AND k.key = $5
                      AND k.resource_id = o.id AND k.expires_at <= now())) AS past_window
  FROM payment_operations o WHERE o.tenant_id = $1 AND o.provider_key = $2`;
