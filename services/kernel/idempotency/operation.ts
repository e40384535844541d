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
}

const OPERATION_ID_PATTERN = /^[a-z]+(\.[a-z][a-z-]*)+\.v\d+$/;

export function defineOperation(def: OperationDef): OperationDef {
  if (!OPERATION_ID_PATTERN.test(def.id)) throw new Error(`bad operation id: ${def.id}`);
  return Object.freeze({ ...def });
}
