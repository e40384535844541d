/**
 * An operation identity: a stable, versioned name for one kind of idempotent command
 * (`payments.create.v1`), declared beside its procedure and never derived from function names.
 * The version changes when the command or the stored response changes shape, so a key written
 * under v1 is never replayed as if it meant v2.
 */
export interface OperationDef {
  /** Stored with every key; part of the request hash. */
  readonly id: string;
  /** The public mutation name: the `operation` label of every metric, and fault-point prefix. */
  readonly publicName: string;
  /** Shape version of the stored response. */
  readonly responseVersion: number;
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
