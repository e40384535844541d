import { defineEntity, p } from '@mikro-orm/core';

/**
 * `idempotency_keys` (migrations/0007, request_hash_key in 0010, waiting in 0011), the parent of a table
 * partitioned by expires_at: its partitions are created and dropped by retention.ts, never by
 * the ORM. Every write goes through idempotency.sql.ts (admission, fenced phases); this entity
 * is for reads and for the schema drift test.
 */
export const IdempotencyKey = defineEntity({
  name: 'IdempotencyKey',
  tableName: 'idempotency_keys',
  properties: {
    // From idempotency_request_id_seq through idempotency_next_request_id() (migrations/0027: the
    // transaction's xid first), not a serial column: the sequence outlives the v1 table.
    id: p
      .bigint('string')
      .primary()
      .autoincrement(false)
      .defaultRaw('idempotency_next_request_id()'),
    tenantId: p.uuid(),
    operation: p.text(),
    key: p.text(),
    requestHash: p.blob(),
    state: p.enum(['started', 'unknown', 'finished']),
    recoveryPoint: p.text(),
    resourceId: p.uuid().nullable(),
    fencingToken: p.bigint('string').defaultRaw('1'),
    leaseExpiresAt: p.datetime().nullable(),
    attempts: p.integer().defaultRaw('0'),
    nextAttemptAt: p.datetime().nullable(),
    lastAttemptAt: p.datetime().nullable(),
    lastAttemptOutcome: p.text().nullable(),
    outcome: p.text().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
    updatedAt: p.datetime().defaultRaw('now()'),
    expiresAt: p.datetime().primary(),
    requestHashKey: p
      .text()
      .nullable()
      .comment(
        'id of the DATA_ENCRYPTION_KEYS key whose HMAC subkey made request_hash; NULL: plain SHA-256',
      ),
    waiting: p
      .boolean()
      .defaultRaw('false')
      .comment(
        'a duplicate waits for this request (Prefer: wait): its next transition notifies idempotency_key_settled',
      ),
  },
  primaryKeys: ['id', 'expiresAt'],
  checks: [
    { name: 'idempotency_keys_key_format_ck', expression: "key ~ '^[A-Za-z0-9._:-]{1,255}$'" },
    {
      name: 'idempotency_keys_finished_ck',
      expression: "state <> 'finished' OR (outcome IS NOT NULL AND lease_expires_at IS NULL)",
    },
  ],
  indexes: [
    {
      name: 'idempotency_keys_scope_ix',
      properties: ['tenantId', 'operation', 'key', 'expiresAt'],
    },
  ],
});
