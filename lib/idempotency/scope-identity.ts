import { createHash, createHmac } from 'node:crypto';
import type { Keyring } from '../crypto/keyring.ts';
import type { ServiceLabel } from '../metrics.ts';
import { lineageIdOf, type OperationDef } from './operation.ts';
import type { Scope } from './types.ts';

/*
 * How a scope (tenant, operation, key) is named outside its row: in metrics, in the advisory
 * lock that serialises its admissions, and in the logs.
 */

/** The labels of an operation's series: never the key, tenant or resource. */
export function metricLabels(scope: { operation: OperationDef }): {
  service: ServiceLabel;
  operation: string;
} {
  return { service: scope.operation.service, operation: scope.operation.publicName };
}

/**
 * SHA-256 of a scope; its first 64 bits are the scope's advisory lock id. Deliberately not
 * keyed: every process must take the same lock for a scope, including two gateways whose
 * keyrings differ in the middle of a rotation, or both could admit the same key. It is never
 * stored or logged (pg_locks shows it while held).
 */
export function scopeDigest(scope: Scope): Buffer {
  return createHash('sha256').update(scopeText(scope)).digest();
}

/** Named by the operation's oldest id, whichever version admits it (operation.ts). */
export function scopeText(scope: Scope): string {
  return `${scope.tenantId}/${lineageIdOf(scope.operation)}/${scope.key}`;
}

/** Hex characters of `keyRef`: 48 bits tell apart the keys one incident involves. */
const KEY_REF_BYTES = 6;

/**
 * What the logs say about the scope a request works on. `keyRef` correlates one key's lines
 * without revealing it: an HMAC under the keyring's key-ref subkey, so a log reader cannot
 * confirm a guessed key (keys are often guessable: order-123). It changes when the first key
 * does: lines from either side of a rotation do not correlate, which costs nothing else.
 */
export function scopeAnnotation(
  scope: Scope,
  keyring: Keyring,
  keyRef: string = keyRefOf(scopeText(scope), keyring),
): {
  tenantId: string;
  operation: string;
  keyRef: string;
} {
  return { tenantId: scope.tenantId, operation: scope.operation.publicName, keyRef };
}

/** scopeAnnotation's keyRef of the scope named `text` (scopeText). */
export function keyRefOf(text: string, keyring: Keyring): string {
  return createHmac('sha256', keyring.subkey('key-ref'))
    .update(text)
    .digest()
    .subarray(0, KEY_REF_BYTES)
    .toString('hex');
}
