import { describe, expect, it } from 'vitest';
import type { JsonValue } from '../../lib/canonical-json.ts';
import { binaryEnvelopeKeyId } from '../../lib/crypto/envelope.ts';
import { Keyring } from '../../lib/crypto/keyring.ts';
import { CiphertextRejectedError, DataKeyUnknownError } from '../../lib/errors.ts';
import { requestHash } from '../../lib/idempotency/request-hash.ts';
import { answerAssociatedData, openStoredAnswer } from '../../lib/idempotency/stored-answer.ts';
import { REGISTER_WEBHOOK_ENDPOINT } from '../../services/notifications/register-endpoint.flow.ts';
import { normaliseCreatePayment } from '../../services/payments/create-payment.command.ts';
import { CREATE_PAYMENT as CREATE_PAYMENT_OPERATION } from '../../services/payments/create-payment.flow.ts';
import {
  CREATE_PAYMENT,
  REGISTER_WEBHOOK_ENDPOINT as REGISTER_ENDPOINT,
} from '../support/operations.ts';
import {
  asReplay,
  dumpTables,
  findCause,
  rawGraphql,
  tablesHolding,
} from '../support/sealed-storage.ts';
import { paymentInput, TENANT_A, useTestStack } from '../support/test-stack.ts';

/**
 * Stored answers and webhook signing secrets are sealed at rest (AES-256-GCM, bound to their
 * row), request hashes are keyed, and rows written before any of that still replay.
 */
const HOOK_URL = 'http://127.0.0.1:9/hooks';
const stack = useTestStack('sealed-storage');

const send = (query: string, input: Record<string, unknown>) =>
  rawGraphql(stack.app.url, { apiKey: TENANT_A.apiKey, query, variables: { input } });

function secretOf(text: string): string {
  const body = JSON.parse(text) as {
    data: { registerWebhookEndpoint: { endpoint: { secret: string } } };
  };
  return body.data.registerWebhookEndpoint.endpoint.secret;
}

function codeOf(text: string): unknown {
  const body = JSON.parse(text) as { errors?: Array<{ extensions?: { code?: unknown } }> };
  return body.errors?.[0]?.extensions?.code;
}

/**
 * The stored answer row of `key`: its scope, and its answer as stored (`sealed`, a binary
 * envelope; `body` for rows written before 0026).
 */
async function answerRowOf(key: string) {
  const { rows } = await stack.db.query<{
    request_id: string;
    tenant_id: string;
    operation: string;
    sealed: Buffer | null;
    body: unknown;
  }>(
    `SELECT r.request_id, k.tenant_id, k.operation, r.sealed, r.body
       FROM idempotency_keys k JOIN idempotency_responses r ON r.request_id = k.id
      WHERE k.key = $1`,
    [key],
  );
  const row = rows[0];
  if (row === undefined) throw new Error(`no stored answer for ${key}`);
  const scope = { tenantId: row.tenant_id, operation: { id: row.operation }, key };
  return { ...row, stored: row.sealed ?? (row.body as JsonValue), scope };
}

/** Writes `key`'s answer in `body`, as a release before 0026 stored it. */
async function setAnswerBody(key: string, bodyJson: string): Promise<void> {
  const { rowCount } = await stack.db.query(
    `UPDATE idempotency_responses r SET body = $2::jsonb, sealed = NULL
       FROM idempotency_keys k WHERE k.key = $1 AND r.request_id = k.id`,
    [key, bodyJson],
  );
  expect(rowCount).toBe(1);
}

async function setAnswerSealed(key: string, sealed: Buffer): Promise<void> {
  const { rowCount } = await stack.db.query(
    `UPDATE idempotency_responses r SET sealed = $2, body = NULL
       FROM idempotency_keys k WHERE k.key = $1 AND r.request_id = k.id`,
    [key, sealed],
  );
  expect(rowCount).toBe(1);
}

describe('at rest', () => {
  it('a dump of every table holds no signing secret and no answer in clear', async () => {
    const reference = 'ref-at-rest-7f3a9c';
    const description = 'desc-at-rest-51be0d';
    const created = await send(
      CREATE_PAYMENT,
      paymentInput('rest-pay', { reference, description, metadata: { note: 'meta-at-rest-c04e' } }),
    );
    expect(created.text).toContain(reference);
    const registered = await send(REGISTER_ENDPOINT, {
      idempotencyKey: 'rest-hook',
      url: HOOK_URL,
    });
    const secret = secretOf(registered.text);
    expect(secret).toMatch(/^whsec_/);

    const dump = await dumpTables(stack.db);
    expect(dump.size).toBeGreaterThan(10);
    // The secret exists only as ciphertext: nowhere, in any table, in clear (nor its key bytes).
    expect(tablesHolding(dump, secret)).toEqual([]);
    expect(tablesHolding(dump, secret.slice('whsec_'.length))).toEqual([]);
    // The answers: no idempotency table shows a field of them. The payment itself (its row,
    // and the event that carries it to the ledger and webhooks) is business data, held as such.
    for (const needle of [reference, description, 'meta-at-rest-c04e', 'pm_card_visa']) {
      const holding = tablesHolding(dump, needle).filter((t) => t.startsWith('idempotency_'));
      expect(holding, needle).toEqual([]);
    }
    expect(tablesHolding(dump, reference).sort()).toEqual(
      ['outbox_events', 'payments'].flatMap((t) =>
        [...dump.keys()].filter((name) => name === t || name.startsWith(`${t}_`)),
      ),
    );
    // And what is there is an envelope under the test key, for both.
    const payment = await answerRowOf('rest-pay');
    expect(payment.body).toBeNull();
    expect(binaryEnvelopeKeyId(payment.sealed!)).toBe('test1');
    const { rows } = await stack.db.query<{ secret: string }>(
      'SELECT secret FROM webhook_endpoints',
    );
    expect(rows.map((r) => r.secret)).toEqual([expect.stringMatching(/^v1\.test1\./)]);
  });

  it("stores the registration's answer without the secret, and replays it byte for byte", async () => {
    const input = { idempotencyKey: 'ref-hook', url: HOOK_URL };
    const first = await send(REGISTER_ENDPOINT, input);
    const secret = secretOf(first.text);
    const row = await answerRowOf('ref-hook');
    const stored = openStoredAnswer(stack.app.services.deps.keyring, row.scope, row.stored);
    expect(stored).toEqual({
      endpoint: {
        id: expect.any(String) as unknown,
        url: HOOK_URL,
        status: 'enabled',
        createdAt: expect.any(String) as unknown,
      },
    });
    expect(JSON.stringify(stored)).not.toContain(secret);
    const replay = await send(REGISTER_ENDPOINT, input);
    expect(replay.text).toBe(asReplay(first.text));
    expect(secretOf(replay.text)).toBe(secret);
  });
});

describe('a stored value that cannot be opened', () => {
  it('under a key the gateway does not hold: a clear error naming the key, not an answer', async () => {
    const input = paymentInput('ghost-pay');
    const first = await send(CREATE_PAYMENT, input);
    expect(codeOf(first.text)).toBeUndefined();
    const row = await answerRowOf('ghost-pay');
    const ghost = Keyring.parse(`ghost:${Buffer.alloc(32, 0x66).toString('base64')}`);
    const answer = openStoredAnswer(stack.app.services.deps.keyring, row.scope, row.stored);
    await setAnswerSealed(
      'ghost-pay',
      ghost.sealBinary(JSON.stringify(answer), answerAssociatedData(row.scope)),
    );
    stack.errors.length = 0;

    const replay = await send(CREATE_PAYMENT, input);
    expect(replay.status).toBe(500);
    expect(codeOf(replay.text)).toBe('INTERNAL_SERVER_ERROR');
    expect(replay.text).not.toContain('"payment"');
    const error = findCause(stack.errors, DataKeyUnknownError);
    expect(error, String(stack.errors)).toBeInstanceOf(DataKeyUnknownError);
    expect(error?.keyId).toBe('ghost');
    expect(error?.message).toContain('data key "ghost"');
  });

  it("copied from another key's row: refused (associated data), never replayed as this one's", async () => {
    await send(CREATE_PAYMENT, paymentInput('copy-from', { amount: '99.00' }));
    const input = paymentInput('copy-to');
    await send(CREATE_PAYMENT, input);
    const from = await answerRowOf('copy-from');
    await setAnswerSealed('copy-to', from.sealed!);
    stack.errors.length = 0;

    const replay = await send(CREATE_PAYMENT, input);
    expect(codeOf(replay.text)).toBe('INTERNAL_SERVER_ERROR');
    expect(replay.text).not.toContain('99.00');
    expect(findCause(stack.errors, CiphertextRejectedError), String(stack.errors)).toBeDefined();
  });
});

describe('answers stored in the text form, before 0026', () => {
  it('replays byte for byte, and is left as it was', async () => {
    const input = paymentInput('text-pay');
    const first = await send(CREATE_PAYMENT, input);
    const row = await answerRowOf('text-pay');
    const { keyring } = stack.app.services.deps;
    const answer = openStoredAnswer(keyring, row.scope, row.stored);
    const envelope = keyring.seal(JSON.stringify(answer), answerAssociatedData(row.scope));
    await setAnswerBody('text-pay', JSON.stringify(envelope));

    const replay = await send(CREATE_PAYMENT, input);
    expect(replay.text).toBe(asReplay(first.text));
    expect((await answerRowOf('text-pay')).body).toBe(envelope);
  });
});

describe('rows written before keyed hashes and sealing', () => {
  /** Rewrites a key's row as the previous release wrote it: plain SHA-256, body in clear. */
  async function asWrittenBefore(key: string, legacyHash: Buffer, body?: unknown): Promise<void> {
    const row = await answerRowOf(key);
    const answer = body ?? openStoredAnswer(stack.app.services.deps.keyring, row.scope, row.stored);
    const { rowCount } = await stack.db.query(
      `UPDATE idempotency_keys SET request_hash = $2, request_hash_key = NULL WHERE key = $1`,
      [key, legacyHash],
    );
    expect(rowCount).toBe(1);
    await setAnswerBody(key, JSON.stringify(answer));
  }

  it('a payment still replays, byte for byte, and a different command is still a reuse', async () => {
    const input = paymentInput('old-pay', { description: 'from before' });
    const first = await send(CREATE_PAYMENT, input);
    const { command } = normaliseCreatePayment({
      tenantId: stack.tenantIds.a,
      ...(input as {
        idempotencyKey: string;
        amount: string;
        currency: string;
        paymentMethod: string;
      }),
    });
    await asWrittenBefore('old-pay', requestHash(CREATE_PAYMENT_OPERATION, command));
    const { rows } = await stack.db.query<{ body: unknown; request_hash_key: string | null }>(
      `SELECT r.body, k.request_hash_key FROM idempotency_keys k
         JOIN idempotency_responses r ON r.request_id = k.id WHERE k.key = 'old-pay'`,
    );
    expect(rows[0]).toMatchObject({
      request_hash_key: null,
      body: { payment: { reference: 'old-pay' } },
    });

    const replay = await send(CREATE_PAYMENT, input);
    expect(replay.text).toBe(asReplay(first.text));
    const reused = await send(CREATE_PAYMENT, { ...input, amount: '10.01' });
    expect(codeOf(reused.text)).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('a registration (v1 answer holding the secret, secret in clear) replays its secret', async () => {
    const input = { idempotencyKey: 'old-hook', url: HOOK_URL };
    const first = await send(REGISTER_ENDPOINT, input);
    const secret = secretOf(first.text);
    const endpoint = (
      JSON.parse(first.text) as {
        data: { registerWebhookEndpoint: { endpoint: Record<string, unknown> } };
      }
    ).data.registerWebhookEndpoint.endpoint;
    await asWrittenBefore('old-hook', requestHash(REGISTER_WEBHOOK_ENDPOINT, { url: HOOK_URL }), {
      endpoint,
    });
    await stack.db.query(
      `UPDATE idempotency_responses r SET version = 1
         FROM idempotency_keys k WHERE k.key = 'old-hook' AND r.request_id = k.id`,
    );
    const { rowCount } = await stack.db.query(
      'UPDATE webhook_endpoints SET secret = $2 WHERE id = $1',
      [endpoint['id'], secret],
    );
    expect(rowCount).toBe(1);

    const replay = await send(REGISTER_ENDPOINT, input);
    expect(replay.text).toBe(asReplay(first.text));
    const reused = await send(REGISTER_ENDPOINT, { ...input, url: 'http://127.0.0.1:9/other' });
    expect(codeOf(reused.text)).toBe('IDEMPOTENCY_KEY_REUSED');
  });
});
