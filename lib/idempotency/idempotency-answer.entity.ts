import { defineEntity, p } from '@mikro-orm/core';

/**
 * `idempotency_responses` (migrations/0007), partitioned by expires_at: stored answers for the
 * replay window. `sealed` holds the answer in the envelope's binary form (0026); `body`, for
 * answers stored before, a sealed envelope as a JSON string (0010). Only stored-answer.ts opens
 * either.
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
    sealed: p
      .blob()
      .nullable()
      .comment(
        'the answer sealed under a data key: a binary v1 envelope (AES-256-GCM); body holds answers stored before 0026',
      ),
  },
  checks: [
    {
      name: 'idempotency_responses_stored_as_ck',
      expression:
        "(stored_as = 'inline' AND num_nonnulls(body, sealed) = 1) OR (stored_as = 'reference' AND body IS NULL AND sealed IS NULL)",
    },
  ],
  primaryKeys: ['requestId', 'expiresAt'],
});
