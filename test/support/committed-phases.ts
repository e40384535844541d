import type pg from 'pg';

/**
 * Every committed phase of every request, as rows of (key, operation, recovery_point,
 * fencing_token, committed_at): the phase log, and the finish each finished key row records.
 * Finishing writes no phase-log row (ADR 0054); the finished row's token and updated_at are
 * the finishing owner's.
 */
export const COMMITTED_PHASES = `(
  SELECT key, operation, recovery_point, fencing_token::text AS fencing_token, committed_at
    FROM idempotency_phase_log
  UNION ALL
  SELECT key, operation, 'finished', fencing_token::text, updated_at
    FROM idempotency_keys WHERE state = 'finished'
) committed_phases`;

/**
 * A key's committed phases, oldest first; of one operation's key when `operation` is given. A
 * phase and the finish committed in one transaction (a refusal at admission) share their time;
 * the finish sorts last.
 */
export async function committedPhases(
  db: pg.Pool,
  key: string,
  operation?: string,
): Promise<Array<{ recovery_point: string; fencing_token: string }>> {
  const { rows } = await db.query<{ recovery_point: string; fencing_token: string }>(
    `SELECT recovery_point, fencing_token FROM ${COMMITTED_PHASES}
      WHERE key = $1 AND ($2::text IS NULL OR operation = $2) ORDER BY committed_at, recovery_point = 'finished'`,
    [key, operation ?? null],
  );
  return rows;
}
