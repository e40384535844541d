import { defineEntity, p } from '@mikro-orm/core';

/**
 * `idempotency_responses` (migrations/0007), partitioned by expires_at: stored answers for the
 * replay window. `body` holds a sealed envelope as a JSON string (0010); only
 * stored-answer.ts opens it.
 */
export const IdempotencyAnswer = defineEntity({
  name: 'IdempotencyAnswer',
  tableName: 'idempotency_responses',
  properties: {
    requestId: p.bigint('string').primary(),
    expiresAt: p.datetime().primary(),
    version: p.smallint(),
    storedAs: p.text(),
    body: p
      .json<unknown>()
      .nullable()
      .comment(
        'a JSON string holding a v1 envelope (AES-256-GCM); a JSON object is a row from before sealing',
      ),
  },
  checks: [
    {
      name: 'idempotency_responses_stored_as_ck',
      expression:
        "(stored_as = 'inline' AND body IS NOT NULL) OR (stored_as = 'reference' AND body IS NULL)",
    },
  ],
  primaryKeys: ['requestId', 'expiresAt'],
});
