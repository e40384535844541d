import type { Queryable } from '../db/pool.ts';

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

/** How one kind of sealed row is re-sealed. */
export interface ResealSpec<Row, Cursor> {
  /**
   * Compare-and-set UPDATE of arrays: $1..$n the row identity columns, then the value as read,
   * then the value sealed anew. A row changed since it was read matches nothing and is left to
   * the next sweep, so no transaction is held while the batch is sealed.
   */
  write: string;
  /** The row's identity, in the order `write` takes it. */
  identity(row: Row): string[];
  /** The stored value as read. */
  stored(row: Row): string;
  /** The value opened (under whichever key sealed it, or none) and sealed under the first key. */
  reseal(row: Row): string;
  /** How a failure names the row, for the operator's report. */
  describe(row: Row): string;
  cursorOf(row: Row): Cursor;
}

/**
 * One batch of a re-seal sweep over `rows` (read in cursor order, at most `limit`): every row
 * that opens is written back under the keyring's first key in one statement; one that does not
 * is reported and left as it is, so a missing key never stops the sweep.
 */
export async function resealRows<Row, Cursor>(
  db: Queryable,
  spec: ResealSpec<Row, Cursor>,
  batch: { rows: Row[]; limit: number },
): Promise<ResealBatch<Cursor>> {
  const { rows } = batch;
  const failures: ResealBatch<Cursor>['failures'] = [];
  const identities: string[][] = [];
  const was: string[] = [];
  const sealed: string[] = [];
  for (const row of rows) {
    try {
      sealed.push(spec.reseal(row));
      identities.push(spec.identity(row));
      was.push(spec.stored(row));
    } catch (error) {
      failures.push({
        row: spec.describe(row),
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
  const columns = identities[0]?.map((_, i) => identities.map((identity) => identity[i]!)) ?? [];
  const written =
    was.length === 0 ? 0 : ((await db.query(spec.write, [...columns, was, sealed])).rowCount ?? 0);
  const last = rows[rows.length - 1];
  return {
    scanned: rows.length,
    resealed: written,
    failures,
    next: last === undefined || rows.length < batch.limit ? null : spec.cursorOf(last),
  };
}
