/**
 * Where a process keeps the idempotency key of a call it has not finished, under an operation
 * id the caller names (`{ operationId: 'checkout-order-1' }`), so that after a crash or a
 * restart mid-retry the same call resumes with the same key instead of charging twice under a
 * new one. The SDK saves the key before the first attempt and deletes it once a final answer
 * (a result, or a refusal that is not retryable) arrives; a retryable failure leaves it.
 *
 * An operation id names one logical operation: reusing one for another request sends the old
 * key with a different command, which the gateway refuses (IDEMPOTENCY_KEY_REUSED).
 */
export interface KeyStore {
  get(operationId: string): Promise<string | undefined>;
  set(operationId: string, key: string): Promise<void>;
  delete(operationId: string): Promise<void>;
}

/**
 * Keys in this process's memory: resumes a call within one process (a retry loop of the
 * caller's own), not across a restart. createFileKeyStore survives restarts.
 */
export function createMemoryKeyStore(): KeyStore {
  const keys = new Map<string, string>();
  return {
    get: (operationId) => Promise.resolve(keys.get(operationId)),
    set(operationId, key) {
      keys.set(operationId, key);
      return Promise.resolve();
    },
    delete(operationId) {
      keys.delete(operationId);
      return Promise.resolve();
    },
  };
}
