import type { JsonValue } from '../canonical-json.ts';
import type { Queryable } from '../db/pool.ts';
import { binaryEnvelopePrefix } from '../crypto/envelope.ts';
import type { Keyring } from '../crypto/keyring.ts';
import { resealRows, type ResealBatch, type ResealSpec } from '../crypto/reseal-batch.ts';
import { answerAssociatedData, openStoredAnswer } from './stored-answer.ts';
import {
  COUNT_ANSWERS_BY_KEY,
  COUNT_LIVE_HASHES_BY_KEY,
  SELECT_ANSWERS_TO_RESEAL,
  WRITE_RESEALED_ANSWERS,
} from './reseal-answers.sql.ts';

/** Where a re-seal sweep of answers stands: the last row it looked at. */
export interface AnswerCursor {
  requestId: string;
  /** As PostgreSQL prints it: a JavaScript Date would drop the microseconds of the key. */
  expiresAt: string;
}

/** Before every row: request ids start at 1. */
const START: AnswerCursor = { requestId: '0', expiresAt: '-infinity' };

interface AnswerRow {
  request_id: string;
  expires_at: string;
  /** The answer as read, as text (reseal-answers.sql.ts STORED_AS_TEXT). */
  stored: string;
  /** One of these two holds it: the binary envelope, or the JSON text of `body`. */
  sealed: Buffer | null;
  body: string | null;
  tenant_id: string;
  operation: string;
  key: string;
}

/**
 * Re-seals up to `limit` stored answers after `after` under the keyring's first key, in the
 * envelope's binary form: answers in clear (written before sealing), in the text form (written
 * before 0026) and under older keys. One SELECT and one UPDATE, no
 * transaction held across them; see reseal-answers.sql.ts for why that is safe while serving.
 */
export async function resealAnswers(
  db: Queryable,
  keyring: Keyring,
  batch: { after: AnswerCursor | null; limit: number },
): Promise<ResealBatch<AnswerCursor>> {
  const after = batch.after ?? START;
  const { rows } = await db.query<AnswerRow>(SELECT_ANSWERS_TO_RESEAL, [
    binaryEnvelopePrefix(keyring.primaryId),
    after.requestId,
    after.expiresAt,
    batch.limit,
  ]);
  return resealRows(db, resealAnswer(keyring), { rows, limit: batch.limit });
}

function resealAnswer(keyring: Keyring): ResealSpec<AnswerRow, AnswerCursor> {
  const scopeOf = (row: AnswerRow) => ({
    tenantId: row.tenant_id,
    operation: { id: row.operation },
    key: row.key,
  });
  return {
    write: WRITE_RESEALED_ANSWERS,
    identity: (row) => [row.request_id, row.expires_at],
    stored: (row) => row.stored,
    reseal: (row) => {
      const stored = row.sealed ?? (JSON.parse(row.body!) as JsonValue);
      const answer = openStoredAnswer(keyring, scopeOf(row), stored);
      const sealed = keyring.sealBinary(JSON.stringify(answer), answerAssociatedData(scopeOf(row)));
      return `\\x${sealed.toString('hex')}`;
    },
    describe: (row) => `answer of request ${row.request_id} (${row.operation})`,
    cursorOf: (row) => ({ requestId: row.request_id, expiresAt: row.expires_at }),
  };
}

/** Stored answers and live request hashes, counted by the data key they need ('' none). */
export async function keysInUse(
  db: Queryable,
): Promise<{ answers: Record<string, number>; requestHashes: Record<string, number> }> {
  const [answers, hashes] = await Promise.all([
    db.query<{ key_id: string; n: number }>(COUNT_ANSWERS_BY_KEY),
    db.query<{ key_id: string; n: number }>(COUNT_LIVE_HASHES_BY_KEY),
  ]);
  const byKey = (rows: Array<{ key_id: string; n: number }>) =>
    Object.fromEntries(rows.map((r) => [r.key_id, r.n]));
  return { answers: byKey(answers.rows), requestHashes: byKey(hashes.rows) };
}
