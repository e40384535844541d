import type { JsonValue } from '../canonical-json.ts';
import { associatedData, isEnvelope } from '../crypto/envelope.ts';
import type { Keyring } from '../crypto/keyring.ts';
import type { OperationDef } from './operation.ts';
import type { KeyRow, Scope, StoredAnswer } from './types.ts';

/** The columns an answer is stored as (FINISH_KEY, FINISH_AT_ADMISSION). */
export interface AnswerToStore {
  /**
   * The answer sealed under the keyring's first key, in the envelope's binary form, or null when
   * the body is over the cap and stored as a reference.
   */
  sealed: Buffer | null;
  version: number;
  storedAs: 'inline' | 'reference';
  /** The summary kept with the metadata after the body is gone. */
  outcome: string;
}

/**
 * `store.admittedAs`: the operation id of the row the answer goes on (an earlier version's, for
 * a key admitted before a bump), which the sealed answer is bound to.
 */
export function answerToStore(
  scope: Scope,
  body: JsonValue,
  store: { maxBytes: number; keyring: Keyring; admittedAs: string },
): AnswerToStore {
  const { operation } = scope;
  const json = JSON.stringify(body);
  // The cap is on the answer itself: sealing adds a fixed overhead (key id, IV, tag).
  const inline = Buffer.byteLength(json, 'utf8') <= store.maxBytes;
  const boundTo = answerAssociatedData({ ...scope, operation: { id: store.admittedAs } });
  return {
    sealed: inline ? store.keyring.sealBinary(json, boundTo) : null,
    version: operation.answerVersion,
    storedAs: inline ? 'inline' : 'reference',
    outcome: operation.outcomeOf(body),
  };
}

/**
 * Binds a sealed answer to its scope (tenant, operation, key): copied onto another key's row it
 * fails to open, so one tenant's answer can never be replayed as another's.
 */
export function answerAssociatedData(scope: {
  tenantId: string;
  operation: { id: string };
  key: string;
}): Buffer {
  // The sealed rows' associated data since 0010: changing it would make every stored answer
  // unreadable, so it keeps the word the table has (idempotency_responses).
  return associatedData(['idempotency-response', scope.tenantId, scope.operation.id, scope.key]);
}

/**
 * The answer a stored value holds, opened under the key it names: a binary envelope (the
 * `sealed` column), or, in `body` for a row written before 0026, a text envelope (a JSON string)
 * or, written before sealing, the answer itself (a JSON object: no answer is ever a bare string).
 * An unknown key or a failed authentication throws; never a wrong answer.
 */
export function openStoredAnswer(
  keyring: Keyring,
  scope: Parameters<typeof answerAssociatedData>[0],
  stored: JsonValue | Buffer,
): JsonValue {
  const what = `the stored answer of ${scope.operation.id}`;
  if (Buffer.isBuffer(stored)) {
    return JSON.parse(keyring.openBinary(stored, answerAssociatedData(scope), what)) as JsonValue;
  }
  if (typeof stored !== 'string') return stored;
  if (!isEnvelope(stored)) {
    throw new Error(`${scope.operation.id}: a stored answer is a string but not an envelope`);
  }
  return JSON.parse(keyring.open(stored, answerAssociatedData(scope), what)) as JsonValue;
}

/**
 * How an operation reads its stored answers back. A deploy may change the shape of an answer
 * while keys written under the old shape are still within their window: each old version gets
 * an explicit upgrade step, so a replay honours the contract of the code that serves it and is
 * never an old body read as if it were the new shape.
 */
export interface AnswerReader {
  /** upgrades[n] turns a body of version n into version n + 1. */
  upgrades: Readonly<Record<number, (body: JsonValue) => Promise<JsonValue>>>;
  /**
   * The answer for a body that was over the size cap: the request's resource rendered now, in
   * the current version. Unlike an inline body it shows the resource as it is at the replay.
   */
  render: (resourceId: string) => Promise<JsonValue>;
}

export async function currentBody(
  operation: OperationDef,
  stored: StoredAnswer,
  reader: AnswerReader,
): Promise<JsonValue> {
  if (stored.storedAs === 'reference') {
    if (stored.resourceId === null) {
      throw new Error(`${operation.id}: an answer stored by reference has no resource`);
    }
    return reader.render(stored.resourceId);
  }
  // Newer than this code knows (a rollback after a deploy): refuse rather than misread it.
  if (stored.version > operation.answerVersion) {
    throw new Error(
      `${operation.id}: stored answer v${stored.version} is newer than this code's v${operation.answerVersion}`,
    );
  }
  let body = stored.body;
  for (let version = stored.version; version < operation.answerVersion; version++) {
    const upgrade = reader.upgrades[version];
    if (upgrade === undefined) {
      throw new Error(`${operation.id}: no upgrade for a stored answer of v${version}`);
    }
    body = await upgrade(body);
  }
  return body;
}

/** The stored answer of a finished row within its window, opened. */
export function storedAnswer(row: KeyRow, scope: Scope, keyring: Keyring): StoredAnswer {
  const common = {
    resourceId: row.resource_id,
    firstRequestAt: row.created_at,
    expiresAt: row.expires_at,
  };
  // A finished row within its window always has its answer: the answer's partition is dropped
  // only once every answer in it has expired, and expires_at never moves earlier.
  if (row.response_version === null || row.response_stored_as === null) {
    throw new Error('a finished request within its window has no stored answer');
  }
  if (row.response_stored_as === 'reference') {
    return { ...common, version: row.response_version, storedAs: 'reference', body: null };
  }
  const stored = row.response_sealed ?? row.response;
  if (stored === null) throw new Error('an inline answer without a body'); // a CHECK
  // Bound to the id the row was admitted under, which may be an earlier version's.
  const admitted = { ...scope, operation: { id: row.operation } };
  const body = openStoredAnswer(keyring, admitted, stored);
  return { ...common, version: row.response_version, storedAs: 'inline', body };
}
