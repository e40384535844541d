import type { EntityManager } from '@mikro-orm/postgresql';
import type { Queryable } from '../db/pool.ts';
import { IdempotencyKey } from './idempotency-key.entity.ts';
import { LIST_UNFINISHED } from './inspection.sql.ts';
import { UNFINISHED_SUMMARY } from './idempotency.sql.ts';
import type { UnfinishedReading } from '../metrics.ts';
import type { OperationDef } from './operation.ts';

/**
 * The engine's read API for people on call: what the ops service shows and acts on, without
 * reaching into the engine's tables or re-stating its rules (which generation of a scope is
 * current, what an expired lease is).
 */
export type RequestState = 'started' | 'unknown';

/** Unfinished requests, oldest first, each with its phase history and every intervention. */
export async function listUnfinishedRequests(
  pool: Queryable,
  filter: { states: RequestState[]; limit: number },
): Promise<Array<Record<string, unknown>>> {
  const { rows } = await pool.query<Record<string, unknown>>(LIST_UNFINISHED, [
    filter.states,
    filter.limit,
  ]);
  return rows;
}

/**
 * A scope's current request: its newest generation (a key may be admitted again after its
 * window; the older rows are history). Null when the scope was never admitted. Read from the
 * primary; a token read here only seeds a conditional UPDATE, which refuses it if the request
 * moved on since.
 */
export async function currentRequest(
  em: EntityManager,
  scope: { tenantId: string; operation: string; key: string },
): Promise<{ state: string; fencingToken: string; resourceId: string | null } | null> {
  const { tenantId, operation, key } = scope;
  const current = await em.fork().findOne(
    IdempotencyKey,
    { tenantId, operation, key },
    {
      orderBy: { expiresAt: 'desc' },
      fields: ['state', 'fencingToken', 'resourceId'],
    },
  );
  if (current === null) return null;
  return {
    state: current.state,
    fencingToken: current.fencingToken,
    resourceId: current.resourceId ?? null,
  };
}

/**
 * The gauges' reading: every operation in `operations` reports, at zero when nothing of it is
 * unfinished ("No data" on a panel must mean "not scraped", never "all clear"), and the rows of
 * an operation's versions count as one (scope-identity.ts). Rows of an operation this process
 * does not know are `other`.
 */
export async function unfinishedByOperation(
  pool: Queryable,
  operations: ReadonlyMap<string, OperationDef>,
): Promise<UnfinishedReading[]> {
  const readings = new Map<string, UnfinishedReading>();
  const zero = { oldestAgeSeconds: 0, staleLeases: 0, unknownOutcomes: 0 };
  for (const op of operations.values()) {
    readings.set(op.publicName, { service: op.service, operation: op.publicName, ...zero });
  }
  for (const row of await unfinishedSummary(pool)) {
    const op = operations.get(row.operation);
    const name = op?.publicName ?? 'other';
    const seen = readings.get(name) ?? {
      service: op?.service ?? 'payments',
      operation: name,
      ...zero,
    };
    readings.set(name, {
      ...seen,
      oldestAgeSeconds: Math.max(seen.oldestAgeSeconds, row.oldestAgeSeconds),
      staleLeases: seen.staleLeases + row.staleLeases,
      unknownOutcomes: seen.unknownOutcomes + row.unknownOutcomes,
    });
  }
  return [...readings.values()];
}

/** Fleet-wide summary of unfinished requests for the gauges, keyed by operation id. */
async function unfinishedSummary(pool: Queryable): Promise<
  Array<{
    operation: string;
    oldestAgeSeconds: number;
    staleLeases: number;
    unknownOutcomes: number;
  }>
> {
  const { rows } = await pool.query<{
    operation: string;
    oldest_age_seconds: number;
    stale_leases: number;
    unknown_outcomes: number;
  }>(UNFINISHED_SUMMARY);
  return rows.map((r) => ({
    operation: r.operation,
    oldestAgeSeconds: r.oldest_age_seconds,
    staleLeases: r.stale_leases,
    unknownOutcomes: r.unknown_outcomes,
  }));
}
