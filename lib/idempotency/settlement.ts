import type { Statement } from '../db/pipelined-statements.ts';
import type { TxClient } from '../db/pool.ts';
import { CLAIM_KEY, INSERT_INTERVENTION, SELECT_UNKNOWN_KEYS } from './idempotency.sql.ts';
import { scopeIdsOf } from './operation.ts';
import { OwnedRequest } from './owned-request.ts';
import type { EngineDeps, OwnedRow, Scope } from './types.ts';

export type InterventionAction =
  | 'reconciled_charge_found'
  | 'reconciled_charge_absent'
  | 'redriven'
  | 'resolved_charged'
  | 'resolved_not_charged';

export interface UnknownRequest {
  tenant_id: string;
  operation: string;
  key: string;
  fencing_token: string;
  resource_id: string | null;
  attempts: number;
  last_attempt_at: Date | null;
  created_at: Date;
}

/** Requests awaiting settlement (state 'unknown'), oldest first. */
export async function listUnknown(
  deps: EngineDeps,
  query: { operations: string[]; limit: number },
): Promise<UnknownRequest[]> {
  const { rows } = await deps.pool.query<UnknownRequest>(SELECT_UNKNOWN_KEYS, [
    query.operations,
    query.limit,
  ]);
  return rows;
}

/**
 * Takes a request over for settlement or a manual re-drive: one that is 'unknown', or 'started'
 * with an expired lease, at the token the caller saw. Null if someone else moved it first —
 * which is how two reconcilers (or an operator and a reconciler) never settle one request twice.
 */
export async function claimForSettlement(
  deps: EngineDeps,
  target: { scope: Scope; seenToken: string },
): Promise<OwnedRequest | null> {
  const { tenantId, operation, key } = target.scope;
  const { rows } = await deps.pool.query<OwnedRow>(CLAIM_KEY, [
    tenantId,
    scopeIdsOf(operation),
    key,
    target.seenToken,
    deps.leaseMs,
  ]);
  return rows[0] === undefined ? null : new OwnedRequest(deps, target.scope, rows[0]);
}

/** Records who or what settled or re-drove a request, inside the caller's transaction. */
export async function recordIntervention(tx: TxClient, entry: Intervention): Promise<void> {
  const { text, values } = interventionStatement(entry);
  await tx.query(text, values);
}

export interface Intervention {
  /** The request acted on: recorded under its scope, as admitted (OwnedRequest.admittedAs). */
  request: Pick<OwnedRequest, 'scope' | 'admittedAs'>;
  action: InterventionAction;
  decidedBy: string;
  reason: string;
  providerReference: string | null;
}

/** The statement recordIntervention runs, for a phase sent as statements. */
export function interventionStatement(entry: Intervention): Statement {
  const { scope, admittedAs } = entry.request;
  return {
    text: INSERT_INTERVENTION,
    values: [
      scope.tenantId,
      admittedAs,
      scope.key,
      entry.action,
      entry.decidedBy,
      entry.reason,
      entry.providerReference,
    ],
  };
}
