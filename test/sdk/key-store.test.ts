/**
 * Key stores, and calls that resume with their key after a restart. A restart is a new client
 * (and a new store object) over the same directory, as a new process would make.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFileKeyStore } from '../../packages/client/src/file-key-store.ts';
import {
  createMemoryKeyStore,
  createPaymentsClient,
  PaymentsApiError,
  type KeyStore,
} from '../../packages/client/src/index.ts';
import { errorAnswer, keyOf, paymentAnswer, scriptedFetch, type Step } from './scripted-fetch.ts';

const INPUT = { amount: '10.50', currency: 'EUR', paymentMethod: 'pm_card_visa' };
let directory: string;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'pgw-sdk-keys-'));
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

function clientWith(input: { store: KeyStore; steps: Step[]; maxAttempts?: number }) {
  const script = scriptedFetch(input.steps);
  const client = createPaymentsClient({
    url: 'http://127.0.0.1:9/graphql',
    apiKey: 'sk_test_sdk',
    fetch: script.fetch,
    keyStore: input.store,
    backoff: { baseMs: 1, capMs: 2 },
    maxAttempts: input.maxAttempts ?? 3,
  });
  return { client, script };
}

describe.each([
  ['in memory', () => createMemoryKeyStore()],
  ['on disk', () => createFileKeyStore({ directory: join(directory, 'keys') })],
])('a key store %s', (_where, makeStore) => {
  it('gets what was set, and nothing once deleted', async () => {
    const store = makeStore();
    expect(await store.get('checkout-1')).toBeUndefined();
    await store.set('checkout-1', 'key-a');
    await store.set('checkout/2 ü', 'key-b');
    expect(await store.get('checkout-1')).toBe('key-a');
    expect(await store.get('checkout/2 ü')).toBe('key-b');
    await store.set('checkout-1', 'key-c');
    expect(await store.get('checkout-1')).toBe('key-c');
    await store.delete('checkout-1');
    await store.delete('never-set');
    expect(await store.get('checkout-1')).toBeUndefined();
    expect(await store.get('checkout/2 ü')).toBe('key-b');
  });
});

describe('the file key store', () => {
  it('keeps keys across store objects, one whole file per operation id, no temporary left', async () => {
    const keys = join(directory, 'keys');
    await createFileKeyStore({ directory: keys }).set('../../etc/passwd', 'key-1');
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        createFileKeyStore({ directory: keys }).set('contended', `key-${i}`),
      ),
    );
    const reopened = createFileKeyStore({ directory: keys });
    expect(await reopened.get('../../etc/passwd')).toBe('key-1');
    expect(await reopened.get('contended')).toMatch(/^key-\d+$/);
    const files = await readdir(keys);
    expect(files).toHaveLength(2);
    for (const file of files) {
      expect(file).toMatch(/^[0-9a-f]{64}\.json$/);
      expect(() => JSON.parse(readFileSync(join(keys, file), 'utf8')) as unknown).not.toThrow();
    }
  });
});

describe('a call with an operation id', () => {
  it('keeps its key before the first attempt leaves, and forgets it once final', async () => {
    const store = createMemoryKeyStore();
    const script = scriptedFetch([paymentAnswer('k')]);
    let storedWhenSent: string | undefined = 'not sent yet';
    const client = createPaymentsClient({
      url: 'http://127.0.0.1:9/graphql',
      apiKey: 'sk_test_sdk',
      keyStore: store,
      fetch: async (url, init) => {
        storedWhenSent = await store.get('order-7');
        return script.fetch(url, init);
      },
    });
    await client.createPayment(INPUT, { operationId: 'order-7' });
    expect(storedWhenSent).toBe(keyOf(script.sent[0]));
    expect(await store.get('order-7')).toBeUndefined();
  });

  it('keeps its key after a retryable failure, and forgets it after a final refusal', async () => {
    const store = createMemoryKeyStore();
    const lost = clientWith({ store, steps: [{ fail: 'network' }], maxAttempts: 2 });
    await expect(
      lost.client.createPayment(INPUT, { operationId: 'order-8' }),
    ).rejects.toMatchObject({ code: 'NETWORK_ERROR', retryable: true });
    expect(await store.get('order-8')).toBe(keyOf(lost.script.sent[0]));

    const refused = clientWith({
      store,
      steps: [errorAnswer({ status: 422, code: 'IDEMPOTENCY_KEY_REUSED' })],
    });
    await expect(
      refused.client.createPayment(INPUT, { operationId: 'order-8' }),
    ).rejects.toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', retryable: false });
    expect(keyOf(refused.script.sent[0])).toBe(keyOf(lost.script.sent[0]));
    expect(await store.get('order-8')).toBeUndefined();
  });

  it('resumes with the same key after a restart (a new client over the same directory)', async () => {
    const keys = join(directory, 'keys');
    const before = clientWith({
      store: createFileKeyStore({ directory: keys }),
      steps: [
        errorAnswer({ status: 202, code: 'OUTCOME_PENDING', extensions: { paymentId: 'p' } }),
      ],
      maxAttempts: 2,
    });
    const interrupted = await before.client
      .createPayment(INPUT, { operationId: 'checkout-order-1' })
      .catch((error: unknown) => error);
    expect(interrupted).toBeInstanceOf(PaymentsApiError);
    const key = keyOf(before.script.sent[0]);

    const after = clientWith({
      store: createFileKeyStore({ directory: keys }),
      steps: [paymentAnswer(String(key))],
    });
    await after.client.createPayment(INPUT, { operationId: 'checkout-order-1' });
    expect(keyOf(after.script.sent[0])).toBe(key);
    expect(await readdir(keys)).toEqual([]);
    // Another operation id gets a key of its own.
    await after.client.createPayment(INPUT, { operationId: 'checkout-order-2' });
    expect(keyOf(after.script.sent[1])).not.toBe(key);
  });

  it('sends nothing when the store cannot keep the key', async () => {
    const broken: KeyStore = {
      get: () => Promise.resolve(undefined),
      set: () => Promise.reject(new Error('disk full')),
      delete: () => Promise.resolve(),
    };
    const { client, script } = clientWith({ store: broken, steps: [paymentAnswer('k')] });
    await expect(client.createPayment(INPUT, { operationId: 'x' })).rejects.toMatchObject({
      code: 'KEY_STORE_FAILED',
      attempts: 0,
    });
    expect(script.sent).toHaveLength(0);
  });
});
