import type { JsonValue } from '../canonical-json.ts';
import type { ServiceLabel } from '../metrics.ts';

/**
 * An operation identity: a stable, versioned name for one kind of idempotent command
 * (`payments.create.v1`), declared beside its procedure and never derived from function names.
 * The id is stored with every key and is part of its request hash and of its sealed answer's
 * binding. It changes only when the command changes meaning; the versions list each other in
 * `otherVersionIds`, so a retry of a key written by the other version still finds it (a replay,
 * a resume, or a refusal if its command no longer hashes alike), never a second payment. A
 * change to the stored answer's shape alone does not change the id: it bumps `answerVersion`,
 * with an upgrade step for the old shape (stored-answer.ts). ADR 0027 has the rules of a bump:
 * readers first, so no process admits a key another has written under an id it does not know.
 */
export interface OperationDef {
  /** Stored with every key this code admits; part of the request hash. */
  readonly id: string;
  /**
   * Ids of this operation under other versions: earlier ones whose keys may still be within
   * their window, and, while a bump rolls out, the next one. A row under any of them is this
   * operation's key: admission, the recovery worker and reconciliation find it, and its owner
   * writes it under the id it was admitted with. New keys are written under `id`.
   */
  readonly otherVersionIds?: readonly string[];
  /** The public mutation name: the `operation` label of every metric, and fault-point prefix. */
  readonly publicName: string;
  /** The service that owns the operation: the `service` label of its metrics. */
  readonly service: ServiceLabel;
  /** Shape version of the stored answer. */
  readonly answerVersion: number;
  /**
   * A short summary of an answer (a payment status, an error code), kept in the key's metadata
   * after the body itself has been dropped with the replay window.
   */
  readonly outcomeOf: (body: JsonValue) => string;
}

const OPERATION_ID_PATTERN = /^([a-z]+(?:\.[a-z][a-z-]*)+)\.v(\d+)$/;

function parseId(id: string): { name: string; version: number } {
  const match = OPERATION_ID_PATTERN.exec(id);
  if (match === null) throw new Error(`bad operation id: ${id}`);
  return { name: match[1]!, version: Number(match[2]) };
}

export function defineOperation(def: OperationDef): OperationDef {
  const current = parseId(def.id);
  for (const other of def.otherVersionIds ?? []) {
    const version = parseId(other);
    if (version.name !== current.name || version.version === current.version) {
      throw new Error(`${def.id}: ${other} is not another version of it`);
    }
  }
  const otherVersionIds = Object.freeze([...(def.otherVersionIds ?? [])]);
  return Object.freeze({ ...def, otherVersionIds });
}

/** Every id a key of this operation may be stored under: the one it writes first. */
export function scopeIdsOf(operation: OperationDef): string[] {
  return [operation.id, ...(operation.otherVersionIds ?? [])];
}

/**
 * The id that names the operation's scopes outside their rows (the admission lock, log
 * references): its oldest version, so processes on either side of a version bump, and those
 * from before it, lock the same scope.
 */
export function lineageIdOf(operation: OperationDef): string {
  return scopeIdsOf(operation).reduce((oldest, id) =>
    parseId(id).version < parseId(oldest).version ? id : oldest,
  );
}
