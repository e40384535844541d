/**
 * Payments made before the measurement, for `bench:growth`: the gateway measured on tables of
 * production size, not on empty ones whose every index fits in a few pages. Each payment leaves
 * what the product's path leaves (automatic capture, SUCCEEDED): the payment, its
 * payment.succeeded event, the ledger's posting (its entry in its row), its receipt, a
 * delivered webhook delivery for one payment in ten, and, for one in four (keys are kept a day
 * plus a week, payments for ever), its idempotency key and its answer.
 * The others whose key's window ended within the week retention keeps leave that key as
 * metadata, in the daily partitions a week of traffic leaves (growth-metadata-days.ts).
 *
 * Made in PostgreSQL, a chunk per transaction, every value derived from the payment's number
 * and a tag of this run: each table's statement finds the same payment, and a second run
 * collides with nothing. Ids are UUIDv7 of created_at, as timeOrderedId makes them: random ids
 * would put the bench's new payments mid-index instead of on the right-hand pages (ADR 0035).
 *
 * Full secondary indexes are dropped for the load and rebuilt from their definitions as read,
 * even when the load fails (only a process killed mid-load leaves them missing). A gateway may
 * already run on the database: it waits on the drop and on the rebuild, and meanwhile its own
 * lookups scan, so nothing should be measured until this returns.
 */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { DEFAULT_RETENTION_POLICY, maintainPartitions } from '../../lib/idempotency/retention.ts';
import { DEFAULT_OUTBOX_RETENTION } from '../../lib/outbox/outbox-retention.ts';
import { layOutMetadataDays } from './growth-metadata-days.ts';
import {
  CREATE_PAYMENT,
  CREATE_PAYMENT_POINTS,
} from '../../services/payments/create-payment.flow.ts';
import type { PaymentEventType } from '../../services/payments/payment-events.ts';

export interface PreloadSpec {
  /** Tenants the rows belong to (uuids of rows already in `tenants`). */
  tenantIds: string[];
  /** Payments to load, with everything each one leaves behind. */
  payments: number;
  /** Payments per statement (bounded transactions); default 250_000. */
  chunk?: number;
  /** Called after each chunk with payments loaded so far. */
  progress?: (loaded: number) => void;
}

const DEFAULT_CHUNK = 250_000;
const KEY_EVERY = 4;
const WEBHOOK_EVERY = 10;
const SUCCEEDED: PaymentEventType = 'payment.succeeded';

/** The tables a payment writes to, whose secondary indexes are rebuilt after the load. */
const LOADED_TABLES = `payments idempotency_keys idempotency_phase_log idempotency_responses
  outbox_events outbox_deliveries ledger_postings receipts`.split(/\s+/);

/**
 * created_at spans the outbox's retention window less an hour: events and deliveries older
 * than the window are deleted by the retention job running beside the bench, which
 * would otherwise start by pruning a load's worth of rows during the measurement.
 */
const SPREAD_SECONDS = DEFAULT_OUTBOX_RETENTION.retentionSeconds - 3_600;

/**
 * Keys expire an hour from now at the earliest (live: their replay window still open), and
 * this far before the newest partition ends at the latest: an expires_at beyond every
 * partition fails its insert ("no partition of relation found for row").
 */
const EXPIRY_LEAD = '1 hour';
const EXPIRY_MARGIN = '10 minutes';
const MIN_EXPIRY_SPAN_SECONDS = 3_600;

const b64url = (bytes: string) => `translate(encode(${bytes}, 'base64'), E'+/=\\n', '-_')`;

/**
 * Payment number n of the run, with everything its rows are made of. $1 run tag, $2..$3 the
 * chunk's numbers, $4 tenants, $5 their reference guards, $6 their webhook consumers, $7 the
 * seconds before now the payments are spread over, $8 payments in all, $9 the first
 * expires_at, $10 the expiries' span in seconds. now() is the chunk's transaction's, so every
 * statement of a chunk derives the same ids. Times grow with n: rows go in in time order, as
 * in production (BRIN indexes and right-hand B-tree pages rely on it). The tenant comes from
 * the hash: n's residues would give every key (n % 4 = 0) to the same few tenants.
 */
const SOURCE = `
WITH g AS (
  SELECT n, h, md5(h) AS h2, 1 + ('x' || substr(h, 16, 4))::bit(16)::int % cardinality($4::uuid[]) AS t,
         (n + ('x' || substr(h, 1, 4))::bit(16)::int / 65536.0) / $8::bigint AS at
    FROM generate_series($2::bigint, $3::bigint) AS n, md5($1::text || ':' || n) AS h
), p AS (
  SELECT g.*, ($4::uuid[])[t] AS tenant_id, ($5::boolean[])[t] AS guard,
         ($6::text[])[t] AS webhook,
         now() - make_interval(secs => $7::float8 * (1 - at)) AS created_at,
         $9::timestamptz + make_interval(secs => $10::float8 * at) AS expires_at,
         100 + ('x' || substr(h, 5, 5))::bit(20)::int % 99901 AS amount_minor,
         CASE WHEN substr(h, 10, 1) < '8' THEN 'EUR' ELSE 'USD' END AS currency,
         CASE WHEN substr(h, 11, 1) < 'c' THEN 'pm_card_visa' ELSE 'pm_card_mastercard' END AS method,
         'ord_' || $1::text || '_' || n AS reference,
         'provider_payment_' || ${b64url(`sha256(convert_to($1::text || ':pk:' || n, 'UTF8'))`)} AS provider_key,
         'ch_' || substr(h, 20, 13) || substr(h2, 20, 11) AS provider_reference,
         -- the provider's round trip, then the dispatcher's lag
         ('x' || substr(h, 12, 2))::bit(8)::int AS call_ms, ('x' || substr(h, 14, 2))::bit(8)::int AS lag_ms
    FROM g
), src AS (
  SELECT p.*, c.done, c.done + make_interval(secs => (50 + lag_ms) / 1000.0) AS posted,
         'evt_payment_' || i.id || '_succeeded' AS event_id,
         'ledger_payment_' || i.id || '_capture' AS posting_id, i.id,
         jsonb_build_object(
           'id', i.id, 'status', 'SUCCEEDED', 'amount', a.amount, 'currency', currency,
           'amountCaptured', a.amount, 'amountRefunded', '0.00', 'paymentMethod', method,
           'captureMethod', 'AUTOMATIC', 'reference', reference,
           'providerReference', provider_reference, 'failureCode', NULL,
           'createdAt', to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           'refunds', '[]'::jsonb, 'description', NULL, 'metadata', NULL, 'version', 2,
           'updatedAt', to_char(c.done AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) AS view
    FROM p,
         LATERAL (SELECT created_at + make_interval(secs => (40 + call_ms) / 1000.0) AS done) c,
         LATERAL (SELECT to_char(amount_minor / 100.0, 'FM999999990.00') AS amount) a,
         LATERAL (SELECT (lpad(to_hex(floor(extract(epoch FROM created_at) * 1000)::bigint), 12, '0')
                          || '7' || substr(h2, 1, 3)
                          || substr('89ab', 1 + ('x' || substr(h2, 4, 1))::bit(4)::int % 4, 1)
                          || substr(h2, 5, 15))::uuid AS id) i
)`;

/** One statement per table, each a chunk's worth, all of them reading SOURCE's $1..$10. */
const STATEMENTS = [
  `INSERT INTO payments (tenant_id, id, status, amount_minor, currency, amount_captured_minor,
     payment_method, capture_method, reference, provider_key, provider_reference, created_at,
     updated_at, version, guarded_reference)
   SELECT tenant_id, id, 'SUCCEEDED', amount_minor, currency, amount_minor, method, 'AUTOMATIC',
     reference, provider_key, provider_reference, created_at, done, 2,
     CASE WHEN guard THEN reference END
     FROM src`,
  // No log consumers: the dispatcher's cursors pass these by, as events long since taken.
  `INSERT INTO outbox_events (tenant_id, id, type, payload, created_at, log_consumers)
   SELECT tenant_id, event_id, '${SUCCEEDED}', jsonb_build_object('payment', view, 'movement',
     jsonb_build_object('kind', 'capture', 'postingId', posting_id,
                        'amountMinor', amount_minor::text, 'currency', currency)), done, '{}'
     FROM src`,
  `INSERT INTO outbox_deliveries (tenant_id, event_id, consumer, status, attempts, next_attempt_at,
     delivered_at)
   SELECT tenant_id, event_id, webhook, 'delivered', 1, done, posted FROM src
    WHERE n % ${WEBHOOK_EVERY} = 0`,
  // A capture's entry, with the accounts of services/ledger/post-movements.ts (ADR 0058).
  `INSERT INTO ledger_postings (tenant_id, id, payment_id, kind, currency, created_at,
     debit_account, credit_account, amount_minor)
   SELECT tenant_id, posting_id, id, 'capture', currency, posted,
          'psp_clearing', 'merchant_balance', amount_minor FROM src`,
  `INSERT INTO receipts (tenant_id, id, payment_id, event_id, recorded_at)
   SELECT tenant_id, 'receipt_payment_' || id, id, event_id, posted FROM src`,
];

/**
 * The finished key row of each row of `kk` (request_id, key, and SOURCE's columns): $11 the
 * operation, `last` its last point, `outcome`, and the expression its expires_at is.
 */
function finishedKeys(p: { last: string; outcome: string; expiry: string }): string {
  return `
  INSERT INTO idempotency_keys (id, tenant_id, operation, key, request_hash, state, recovery_point,
    resource_id, fencing_token, outcome, created_at, updated_at, expires_at)
  SELECT request_id, tenant_id, $11::text, key, sha256(convert_to(key, 'UTF8')), 'finished',
         ${p.last}::text, id, 1, ${p.outcome}::text, created_at, done, ${p.expiry}
    FROM kk`;
}

/**
 * A key and its answer, from one set of rows (ids from the key's own sequence); a payment
 * admitted and finished at once writes no phase-log row (ADRs 0054, 0056). $11 operation,
 * $12 answer version, $13 outcome, $14 last point.
 * The answer has a sealed answer's binary form and length (envelope.ts), under a key id
 * ("preload") no keyring holds: a replay of one of these keys would fail to open it, and none
 * comes (the keys are this run's own).
 */
const KEYS_STATEMENT = `${SOURCE}, kk AS MATERIALIZED (
  SELECT src.*, nextval('idempotency_request_id_seq') AS request_id,
         md5($1::text || ':key:' || n)::uuid::text AS key
    FROM src WHERE n % ${KEY_EVERY} = 0
), k AS (${finishedKeys({ last: '$14', outcome: '$13', expiry: 'expires_at' })}
)
INSERT INTO idempotency_responses (request_id, expires_at, version, stored_as, sealed)
SELECT request_id, expires_at, $12::smallint, 'inline',
       '\\x0107'::bytea || convert_to('preload', 'UTF8') || substring(decode(h, 'hex') FROM 1 FOR 12)
       || decode(h2, 'hex') || convert_to(jsonb_build_object('payment', view)::text, 'UTF8')
  FROM kk`;

/**
 * The expired keys of the days retention still keeps (growth-metadata-days.ts): every payment
 * without a live key whose window ended since $15, finished, with no answer (answers go with
 * their window). $11 operation, $12 outcome, $13 last point, $14 ttl seconds, $15 the oldest
 * kept day.
 */
const METADATA_STATEMENT = `${SOURCE}, kk AS MATERIALIZED (
  SELECT src.*, nextval('idempotency_request_id_seq') AS request_id,
         md5($1::text || ':metadata:' || n)::uuid::text AS key, e.ended
    FROM src, LATERAL (SELECT done + make_interval(secs => $14::float8) AS ended) e
   WHERE n % ${KEY_EVERY} <> 0 AND e.ended >= $15::timestamptz AND e.ended < now()
), k AS (${finishedKeys({ last: '$13', outcome: '$12', expiry: 'ended' })}
  RETURNING 1
)
SELECT count(*) FROM k`;

/**
 * Non-unique indexes that back no constraint, on the loaded tables. Partial ones stay: they are
 * what a running gateway's background work polls (due deliveries, the event log), which would
 * scan the whole table on every poll without them, and the loaded rows are outside most of
 * their predicates. A partitioned table's index reads `ON ONLY` (the parent alone); recreated
 * without it, it is built on every partition too, as the migration made it.
 */
const SELECT_SECONDARY_INDEXES = `
SELECT i.indexrelid::regclass::text AS name,
       replace(pg_get_indexdef(i.indexrelid), ' ON ONLY ', ' ON ') AS definition
  FROM pg_index i
 WHERE i.indrelid IN (SELECT to_regclass(t) FROM unnest($1::text[]) AS t)
   AND NOT i.indisunique AND NOT i.indisprimary AND i.indpred IS NULL
   AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
 ORDER BY 1`;

/** Between now + lead and the newest partition's end less the margin, in every table. */
const SELECT_EXPIRY_WINDOW = `
SELECT now() + interval '${EXPIRY_LEAD}' AS first,
       extract(epoch FROM min(upper_bound) - interval '${EXPIRY_MARGIN}'
                          - (now() + interval '${EXPIRY_LEAD}'))::float8 AS span
  FROM (SELECT parent, max(upper_bound) AS upper_bound FROM idempotency_partitions GROUP BY parent) t
HAVING count(*) = 3`;

export async function preload(pool: pg.Pool, spec: PreloadSpec): Promise<void> {
  const chunk = spec.chunk ?? DEFAULT_CHUNK;
  if (![spec.payments, chunk].every(Number.isSafeInteger) || spec.payments < 0 || chunk < 1) {
    throw new Error(`preload: bad sizes (payments ${spec.payments}, chunk ${chunk})`);
  }
  const tenants = await tenantsOf(pool, spec.tenantIds);
  const expiry = await expiryWindow(pool);
  const oldest = await layOutMetadataDays(pool);
  const ttl = DEFAULT_RETENTION_POLICY.ttlSeconds;
  const run = randomBytes(4).toString('hex');
  const { id, answerVersion, outcomeOf } = CREATE_PAYMENT;
  const outcome = outcomeOf({ payment: { status: 'SUCCEEDED' } });
  const finished = CREATE_PAYMENT_POINTS.finished;
  const client = await pool.connect();
  try {
    type Index = { name: string; definition: string };
    const { rows: indexes } = await client.query<Index>(SELECT_SECONDARY_INDEXES, [LOADED_TABLES]);
    const drops = indexes.map((i) => ({ text: `DROP INDEX ${i.name}` }));
    await inTransaction(client, drops);
    try {
      for (let first = 0; first < spec.payments; first += chunk) {
        const last = Math.min(first + chunk, spec.payments) - 1;
        const values = [run, first, last, ...tenants, SPREAD_SECONDS, spec.payments, ...expiry];
        await inTransaction(client, [
          ...STATEMENTS.map((statement) => ({ text: `${SOURCE} ${statement}`, values })),
          { text: KEYS_STATEMENT, values: [...values, id, answerVersion, outcome, finished] },
          { text: METADATA_STATEMENT, values: [...values, id, outcome, finished, ttl, oldest] },
        ]);
        spec.progress?.(last + 1);
      }
    } finally {
      // Whether the load went through or not: all back in one transaction, or none and the
      // definitions in the error, so that nothing is lost.
      await inTransaction(client, [
        { text: `SET LOCAL maintenance_work_mem = '256MB'` },
        ...indexes.map((i) => ({ text: i.definition })),
      ]).catch((error: unknown) => {
        const lost = indexes.map((i) => `${i.definition};`).join('\n');
        throw new Error(`preload: indexes not recreated; create them:\n${lost}`, { cause: error });
      });
    }
  } finally {
    client.release();
  }
  // Every loaded key is finished: the low-water mark of unfinished requests goes past them all,
  // where the sweeps of a month of traffic would have left it (ADR 0062), rather than have the
  // first sweeps of the measurement read the whole load.
  await pool.query(SKIP_LOW_WATER_PAST_LOAD);
  // VACUUM besides ANALYZE: on a server with autovacuum on, the inserts alone would trigger a
  // vacuum of every loaded table, which would then run during the measurement.
  await pool.query(`VACUUM (ANALYZE) ${LOADED_TABLES.join(', ')}`);
}

/**
 * The mark and the next one at the sequence's position at once, and any unfinished request
 * below it parked (none is loaded; one admitted before the load would be). Only with nothing
 * else admitting, as during the load: no transaction can hold an id below the position unseen.
 */
const SKIP_LOW_WATER_PAST_LOAD = `
WITH position AS (
  SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END AS next_id
    FROM idempotency_request_id_seq
), parked AS (
  INSERT INTO idempotency_parked (request_id)
  SELECT k.id FROM idempotency_keys k, idempotency_low_water m
   WHERE k.id >= m.low_water AND k.state <> 'finished'
      ON CONFLICT ON CONSTRAINT idempotency_parked_pk DO NOTHING
)
UPDATE idempotency_low_water
   SET low_water = (SELECT next_id FROM position), next_low_water = (SELECT next_id FROM position),
       next_after = pg_current_xact_id()
 WHERE low_water < (SELECT next_id FROM position)`;

/**
 * Statements in one transaction, with no statement timeout: a product pool's is for requests,
 * and a chunk or an index build runs longer.
 */
async function inTransaction(client: pg.PoolClient, statements: pg.QueryConfig[]): Promise<void> {
  try {
    await client.query('BEGIN');
    await client.query('SET LOCAL statement_timeout = 0');
    for (const statement of statements) await client.query(statement);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** The tenants' parameters of SOURCE ($4, $5, $6), in the order given. */
async function tenantsOf(pool: pg.Pool, ids: string[]): Promise<unknown[]> {
  // A webhook delivery names an endpoint of the tenant's, or one made up for a tenant without.
  type Found = { ids: string[] | null; guards: boolean[]; webhooks: string[] };
  const { rows } = await pool.query<Found>(
    `SELECT array_agg(t.id ORDER BY w.i) AS ids,
            array_agg(coalesce(s.reference_guard, false) ORDER BY w.i) AS guards,
            array_agg('webhook:' || coalesce(
              (SELECT e.id FROM webhook_endpoints e WHERE e.tenant_id = t.id
                ORDER BY e.created_at LIMIT 1), md5(t.id::text)::uuid) ORDER BY w.i) AS webhooks
       FROM unnest($1::uuid[]) WITH ORDINALITY AS w(id, i)
       JOIN tenants t ON t.id = w.id
       LEFT JOIN payment_settings s ON s.tenant_id = t.id`,
    [ids],
  );
  const { ids: known, guards, webhooks } = rows[0]!;
  if (known?.length !== ids.length) throw new Error('preload: tenantIds not all in tenants');
  return [known, guards, webhooks];
}

/**
 * Where the loaded keys' expires_at may go ($9, $10). A database migrated late in the day has
 * its first partition ending at midnight, too soon: then partitions are laid out ahead as the
 * gateway's retention job would (its defaults), and the window read again.
 */
async function expiryWindow(pool: pg.Pool): Promise<unknown[]> {
  for (let attempt = 0; ; attempt++) {
    const { rows } = await pool.query<{ first: Date; span: number }>(SELECT_EXPIRY_WINDOW);
    const window = rows[0];
    if (window && window.span >= MIN_EXPIRY_SPAN_SECONDS) return [window.first, window.span];
    if (attempt > 0) throw new Error('preload: no idempotency partition reaches far enough ahead');
    await maintainPartitions(pool, DEFAULT_RETENTION_POLICY);
  }
}
