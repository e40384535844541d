import type { JsonValue } from '../canonical-json.ts';
import type { Queryable } from '../db/pool.ts';
import type { Keyring } from '../crypto/keyring.ts';
import { answerAssociatedData, openStoredAnswer } from './stored-response.ts';
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

export interface ResealBatch<Cursor> {
  /** Rows this batch looked at (each one was not under the first key when read). */
  scanned: number;
  /** Rows now sealed under the first key. */
  resealed: number;
  /** Rows that could not be opened: a key not in the keyring, or a failed authentication. */
  failures: Array<{ row: string; error: string }>;
  /** Where the next batch starts; null when this one reached the end. */
  next: Cursor | null;
}

interface AnswerRow {
  request_id: string;
  expires_at: string;
  body: string;
  tenant_id: string;
  operation: string;
  key: string;
}

/**
 * Re-seals up to `limit` stored answers after `after` under the keyring's first key: answers in
 * clear (written before sealing) and answers under older keys. One SELECT and one UPDATE, no
 * transaction held across them; see reseal-answers.sql.ts for why that is safe while serving.
 */
export async function resealAnswers(
  db: Queryable,
  keyring: Keyring,
  batch: { after: AnswerCursor | null; limit: number },
): Promise<ResealBatch<AnswerCursor>> {
  const after = batch.after ?? START;
  const { rows } = await db.query<AnswerRow>(SELECT_ANSWERS_TO_RESEAL, [
    keyring.primaryId,
    after.requestId,
    after.expiresAt,
    batch.limit,
  ]);
  const failures: ResealBatch<AnswerCursor>['failures'] = [];
  const writes = {
    ids: [] as string[],
    expiries: [] as string[],
    was: [] as string[],
    sealed: [] as string[],
  };
  for (const row of rows) {
    const scope = { tenantId: row.tenant_id, operation: { id: row.operation }, key: row.key };
    try {
      const answer = openStoredAnswer(keyring, scope, JSON.parse(row.body) as JsonValue);
      writes.sealed.push(keyring.seal(JSON.stringify(answer), answerAssociatedData(scope)));
      writes.ids.push(row.request_id);
      writes.expiries.push(row.expires_at);
      writes.was.push(row.body);
    } catch (error) {
      failures.push({
        row: `answer of request ${row.request_id} (${row.operation})`,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
  const written =
    writes.ids.length === 0
      ? 0
      : ((
          await db.query(WRITE_RESEALED_ANSWERS, [
            writes.ids,
            writes.expiries,
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
        : { requestId: last.request_id, expiresAt: last.expires_at },
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
