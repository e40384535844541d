/**
 * Movements posted in one statement (post-movements.ts), arrays position by position: $1
 * tenants, $2 posting ids, $3 payment ids, $4 kinds, $5 currencies, $6 amounts in minor units,
 * $7 debited and $8 credited accounts. A movement reaches the postings once per posting id (the
 * first of a call's copies): the posting id is the movement's identity, kept as long as the
 * books, so a message redelivered or another message for the same movement posts nothing (ADR
 * 0049). Each posting is its whole entry, one debit and one credit of one amount (ADR 0058).
 * Back: the postings inserted. Skips postings already made by a probe, not ON CONFLICT, unless
 * it races another posting of the same movement (ADR 0066).
 */
export const POST_MOVEMENTS = {
  probing: postMovements(`
 WHERE NOT EXISTS (SELECT 1 FROM ledger_postings p
                    WHERE p.tenant_id = movement.tenant_id AND p.id = movement.posting_id)`),
  racing: postMovements(`
    ON CONFLICT ON CONSTRAINT ledger_postings_pk DO NOTHING`),
  constraint: 'ledger_postings_pk',
};

/** POST_MOVEMENTS with how it skips postings already made (insert-unless-present.ts). */
function postMovements(skipping: string): string {
  return `
WITH movement AS (
  SELECT DISTINCT ON (m.tenant_id, m.posting_id) m.*
    FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::text[], $5::text[], $6::bigint[],
                $7::text[], $8::text[])
           WITH ORDINALITY AS m(tenant_id, posting_id, payment_id, kind, currency, amount_minor,
                                debit_account, credit_account, n)
   ORDER BY m.tenant_id, m.posting_id, m.n
)
INSERT INTO ledger_postings
       (tenant_id, id, payment_id, kind, currency, debit_account, credit_account, amount_minor)
SELECT tenant_id, posting_id, payment_id, kind, currency, debit_account, credit_account,
       amount_minor
  FROM movement${skipping}
RETURNING id, kind`;
}

/**
 * What a merchant may pay out, per currency, and how far behind the payments that is (ADR 0041).
 * The ledger posts from the event log a moment after a capture or refund commits (ADR 0026), so
 * beside what is posted (the credits and debits of the balance account) this reads what is
 * committed and not posted yet: the movements of the ledger's events after its cursor, and of
 * its delivery rows still pending (a take that failed, waiting for its retry), less those whose
 * posting exists (taken, the cursor not yet moved past them). One statement, so one snapshot:
 * a movement posted between two reads could otherwise be in neither.
 *
 * as_of: every movement of a payment change whose updatedAt (the event's payment, else the
 * event's own time for events written before payments carried it) is at or before it is posted.
 * A millisecond before the oldest unposted one, since the API's instants are whole
 * milliseconds; now() when none is waiting. A delivery the dispatcher abandoned is not counted:
 * an operator's to redrive (OutboxDeliveryLagging). $1 tenant.
 */
export const SELECT_BALANCES = `
WITH posted AS (
  SELECT currency,
         sum(CASE WHEN credit_account = 'merchant_balance' THEN amount_minor ELSE 0 END)
         - sum(CASE WHEN debit_account = 'merchant_balance' THEN amount_minor ELSE 0 END)
           AS available_minor
    FROM ledger_postings
   WHERE tenant_id = $1 AND 'merchant_balance' IN (debit_account, credit_account)
   GROUP BY currency
), waiting AS (
  SELECT e.payload, e.created_at
    FROM outbox_cursors c
    JOIN outbox_events e
      ON (e.written_by, e.log_seq) > (c.written_by, c.log_seq)
     AND e.log_consumers <> '{}' AND c.consumer = ANY (e.log_consumers)
   WHERE c.consumer = 'ledger' AND e.tenant_id = $1
  UNION ALL
  -- strpos: the predicate of outbox_deliveries_local_due_ix (0020), which holds these rows.
  SELECT e.payload, e.created_at
    FROM outbox_deliveries d
    JOIN outbox_events e ON e.tenant_id = d.tenant_id AND e.id = d.event_id
   WHERE d.status = 'pending' AND strpos(d.consumer, ':') = 0
     AND d.consumer = 'ledger' AND d.tenant_id = $1
), unposted AS (
  SELECT DISTINCT ON (m ->> 'postingId')
         m ->> 'currency' AS currency,
         CASE m ->> 'kind' WHEN 'refund' THEN -(m ->> 'amountMinor')::bigint
                           ELSE (m ->> 'amountMinor')::bigint END AS amount_minor,
         COALESCE((w.payload #>> '{payment,updatedAt}')::timestamptz, w.created_at) AS changed_at
    FROM waiting w CROSS JOIN LATERAL (SELECT w.payload -> 'movement' AS m) movement
   WHERE jsonb_typeof(m) = 'object'
     AND NOT EXISTS (SELECT FROM ledger_postings p WHERE p.tenant_id = $1 AND p.id = m ->> 'postingId')
   ORDER BY m ->> 'postingId', changed_at
), pending AS (
  SELECT currency, sum(amount_minor) AS pending_minor, min(changed_at) AS oldest
    FROM unposted
   GROUP BY currency
)
SELECT currency,
       COALESCE(posted.available_minor, 0)::text AS available_minor,
       COALESCE(pending.pending_minor, 0)::text AS pending_minor,
       least(now(), pending.oldest - interval '1 millisecond') AS as_of
  FROM posted FULL JOIN pending USING (currency)
 ORDER BY currency`;

/**
 * Debits and credits per currency over every account. Each posting debits and credits its one
 * amount (ADR 0058), so the two are equal by construction; the sums say how much has moved.
 */
export const SELECT_TRIAL_BALANCE = `
SELECT currency, sum(amount_minor)::text AS debits_minor, sum(amount_minor)::text AS credits_minor
  FROM ledger_postings
 WHERE tenant_id = $1
 GROUP BY currency
 ORDER BY currency`;
