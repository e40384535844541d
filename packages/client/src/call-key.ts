/**
 * The idempotency key of one logical call: the caller's, the one a keyStore kept for its
 * operation id (a call resumed after a restart), or a new one. A new key is saved before the
 * first attempt leaves: a key only in memory dies with the process, and the retry after the
 * restart would be a second payment.
 */
import { PaymentsApiError } from './payments-api-error.ts';
import type { KeyStore } from './key-store.ts';

export interface CallKey {
  key: string;
  /** The call has its final answer: forget the key (a no-op without an operation id). */
  finish(): Promise<void>;
}

export async function claimCallKey(input: {
  explicitKey: string | undefined;
  operationId: string | undefined;
  store: KeyStore | undefined;
}): Promise<CallKey> {
  const { operationId, store } = input;
  if (operationId === undefined || store === undefined) {
    return { key: input.explicitKey ?? crypto.randomUUID(), finish: () => Promise.resolve() };
  }
  let key: string;
  try {
    const stored = await store.get(operationId);
    key = input.explicitKey ?? stored ?? crypto.randomUUID();
    if (key !== stored) await store.set(operationId, key);
  } catch (cause) {
    throw new PaymentsApiError({
      code: 'KEY_STORE_FAILED',
      message: `the key store could not keep the key of ${operationId}: nothing was sent`,
      httpStatus: null,
      retryable: true,
      attempts: 0,
      requestIds: [],
      cause,
    });
  }
  return {
    key,
    async finish() {
      try {
        await store.delete(operationId);
      } catch {
        // The answer is final and stands. A key left behind only makes a later call under the
        // same operation id replay this answer, which is what the key is for.
      }
    },
  };
}
