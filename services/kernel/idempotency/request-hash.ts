import { createHash } from 'node:crypto';
import { canonicalJson, type JsonValue } from '../canonical-json.ts';
import type { OperationDef } from './operation.ts';

/**
 * The hash that tells "a retry of the same command" from "another command wearing the same
 * key". It covers the operation id (with its version) and the validated, normalised command —
 * never raw bytes, never the key itself or credentials. Changing what goes in here changes the
 * contract: old retries would start to look different.
 */
export function requestHash(operation: OperationDef, command: JsonValue): Buffer {
  return createHash('sha256')
    .update(canonicalJson({ operation: operation.id, command }))
    .digest();
}
