import type { JsonValue } from '../canonical-json.ts';
import type { ServiceName } from '../metrics.ts';

/**
 * An operation identity: a stable, versioned name for one kind of idempotent command
 * (`payments.create.v1`), declared beside its procedure and never derived from function names.
 * The id is part of the key's scope and of the request hash: it changes only when the command
 * changes meaning, and then keys written under the old id are a different scope. A change to the
 * stored answer's shape does not change the id (a retry across the deploy must still find its
 * key); it bumps `responseVersion`, with an upgrade step for the old shape (stored-response.ts).
 */
export interface OperationDef {
  /** Stored with every key; part of the request hash. */
  readonly id: string;
  /** The public mutation name: the `operation` label of every metric, and fault-point prefix. */
  readonly publicName: string;
  /** The service that owns the operation: the `service` label of its metrics. */
  readonly service: ServiceName;
  /** Shape version of the stored response. */
  readonly responseVersion: number;
  /**
   * A short summary of an answer (a payment status, an error code), kept in the key's metadata
   * after the body itself has been dropped with the replay window.
   */
  readonly outcomeOf: (body: JsonValue) => string;
  /**
   * Whether unanswered provider attempts can make a request 'unknown'. Operations on a charge
   * that surely exists (capture, void) are safe to re-send forever with their key, so they only
   * back off; only creating a charge needs reconciliation.
   */
  readonly canBecomeUnknown: boolean;
}

const OPERATION_ID_PATTERN = /^[a-z]+(\.[a-z][a-z-]*)+\.v\d+$/;

export function defineOperation(def: OperationDef): OperationDef {
  if (!OPERATION_ID_PATTERN.test(def.id)) throw new Error(`bad operation id: ${def.id}`);
  return Object.freeze({ ...def });
}
