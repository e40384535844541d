import type { EntityManager } from '@mikro-orm/postgresql';
import type { Queryable } from '../db/pool.ts';
import { IdempotencyKey } from './idempotency-key.entity.ts';
import { LIST_UNFINISHED } from './inspection.sql.ts';
import { UNFINISHED_SUMMARY } from './idempotency.sql.ts';

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

/** Fleet-wide summary of unfinished requests for the gauges, keyed by operation id. */
export async function unfinishedSummary(pool: Queryable): Promise<
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
