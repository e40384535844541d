import { afterAll, describe, expect, it } from 'vitest';
import type { JsonValue } from '../../lib/canonical-json.ts';
import { binaryEnvelopeKeyId, envelopeKeyId } from '../../lib/crypto/envelope.ts';
import { DataKeyUnknownError } from '../../lib/errors.ts';
import { answerAssociatedData, openStoredAnswer } from '../../lib/idempotency/stored-answer.ts';
import { openWebhookSecret } from '../../services/notifications/webhook-secret.ts';
import { CREATE_PAYMENT, REGISTER_WEBHOOK_ENDPOINT } from '../support/operations.ts';
import { runOpsCli } from '../support/ops-cli.ts';
import { findCause, rawGraphql, sealedValues } from '../support/sealed-storage.ts';
import { useTestDatabase } from '../support/test-database.ts';
import {
  paymentInput,
  startTestStack,
  TENANT_A,
  testKeyring,
  type TestStack,
} from '../support/test-stack.ts';

/**
 * A rotation of DATA_ENCRYPTION_KEYS as an operator does it: the gateway runs under key A, is
 * restarted with `B,A`, then `ops reencrypt` moves every stored value to B. Replays stay the
 * same bytes throughout; afterwards B alone opens everything that is stored.
 */
const database = useTestDatabase('data-key-rotation');
/** Synthetic keys: fixed bytes, obviously not real. */
const KEY_A = `ka:${Buffer.alloc(32, 0xa1).toString('base64')}`;
const KEY_B = `kb:${Buffer.alloc(32, 0xb2).toString('base64')}`;
const HOOK_URL = 'http://127.0.0.1:9/hooks';

let stack: TestStack | undefined;
afterAll(async () => {
  await stack?.stop();
});

/** Restarts the gateway on the same database with another DATA_ENCRYPTION_KEYS. */
async function restartWith(keys: string): Promise<TestStack> {
  await stack?.stop();
  stack = await startTestStack({ databaseUrl: database.url, app: { keyring: testKeyring(keys) } });
  return stack;
}

/** The requests whose answers must not change, and the bytes of their replays. */
const REQUESTS = [
  { name: 'payment', query: CREATE_PAYMENT, input: paymentInput('rot-pay', { description: 'd' }) },
  {
    name: 'registration',
    query: REGISTER_WEBHOOK_ENDPOINT,
    input: { idempotencyKey: 'rot-hook', url: HOOK_URL },
  },
  { name: 'answer in clear', query: CREATE_PAYMENT, input: paymentInput('rot-clear') },
];

function send(on: TestStack, request: (typeof REQUESTS)[number]) {
  return rawGraphql(on.app.url, {
    apiKey: TENANT_A.apiKey,
    query: request.query,
    variables: { input: request.input },
  });
}

async function replays(on: TestStack): Promise<string[]> {
  const texts: string[] = [];
  for (const request of REQUESTS) texts.push((await send(on, request)).text);
  return texts;
}

/** The key each stored answer and secret is sealed under ('clear' when it is not sealed). */
async function sealingKeys(on: TestStack): Promise<string[]> {
  const { answers, secrets } = await sealedValues(on.db);
  return [
    ...answers.map((a) =>
      Buffer.isBuffer(a.body)
        ? binaryEnvelopeKeyId(a.body)
        : typeof a.body === 'string'
          ? envelopeKeyId(a.body)
          : 'clear',
    ),
    ...secrets.map((s) => envelopeKeyId(s.secret) ?? 'clear'),
  ].map(String);
}

describe('a rotation from key A to key B', () => {
  let underA: string[];

  it('under A: answers, one left in clear and one in the text form, as older releases wrote them', async () => {
    const a = await restartWith(KEY_A);
    for (const request of REQUESTS) expect((await send(a, request)).status).toBe(200);
    // An answer written before sealing: its body in clear.
    const { answers } = await sealedValues(a.db);
    const clear = answers.find((x) => x.key === 'rot-clear')!;
    const body = openStoredAnswer(
      a.app.services.deps.keyring,
      { tenantId: clear.tenantId, operation: { id: clear.operation }, key: clear.key },
      clear.body as JsonValue | Buffer,
    );
    await a.db.query(
      `UPDATE idempotency_responses r SET body = $1::jsonb, sealed = NULL
         FROM idempotency_keys k WHERE k.key = 'rot-clear' AND r.request_id = k.id`,
      [JSON.stringify(body)],
    );
    // An answer sealed in the text form (before 0026), under A.
    const hook = answers.find((x) => x.key === 'rot-hook')!;
    const hookScope = { tenantId: hook.tenantId, operation: { id: hook.operation }, key: hook.key };
    const { keyring } = a.app.services.deps;
    const hookAnswer = openStoredAnswer(keyring, hookScope, hook.body as Buffer);
    await a.db.query(
      `UPDATE idempotency_responses r SET body = to_jsonb($1::text), sealed = NULL
         FROM idempotency_keys k WHERE k.key = 'rot-hook' AND r.request_id = k.id`,
      [keyring.seal(JSON.stringify(hookAnswer), answerAssociatedData(hookScope))],
    );
    underA = await replays(a);
    expect(underA.every((text) => text.includes('"replayed":true'))).toBe(true);
    expect((await sealingKeys(a)).sort()).toEqual(['clear', 'ka', 'ka', 'ka']);
  });

  it('restarted with B,A: replays are the same bytes, new answers are sealed under B', async () => {
    const ba = await restartWith(`${KEY_B},${KEY_A}`);
    expect(await replays(ba)).toEqual(underA);
    const fresh = await rawGraphql(ba.app.url, {
      apiKey: TENANT_A.apiKey,
      query: CREATE_PAYMENT,
      variables: { input: paymentInput('rot-new') },
    });
    expect(fresh.status).toBe(200);
    expect((await sealingKeys(ba)).sort()).toEqual(['clear', 'ka', 'ka', 'ka', 'kb']);
    const { rows } = await ba.db.query<{ key: string; request_hash_key: string }>(
      `SELECT key, request_hash_key FROM idempotency_keys ORDER BY key`,
    );
    expect(rows).toEqual([
      { key: 'rot-clear', request_hash_key: 'ka' },
      { key: 'rot-hook', request_hash_key: 'ka' },
      { key: 'rot-new', request_hash_key: 'kb' },
      { key: 'rot-pay', request_hash_key: 'ka' },
    ]);
  });

  it('ops reencrypt moves every stored value to B, replays unchanged; a re-run has nothing to do', async () => {
    const ba = stack!;
    const run = await runOpsCli(ba.app.url, ['reencrypt', '--batch', '1']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^4 stored value\(s\) to re-seal under data key "kb"/);
    expect(run.stdout).toContain('progress 100% (4/4): 4 re-sealed, 0 failed');
    expect(run.stdout).toMatch(/│ re-sealed +│ 4 +│/);
    expect(run.stdout).toMatch(/│ could not be opened +│ 0 +│/);
    // What still needs A: only the request hashes of live keys (they cannot be re-keyed).
    expect(run.stdout).toMatch(/│ ka +│ answers 0, secrets 0, live request hashes 3 +│/);
    expect(run.stdout).toMatch(/│ kb +│ answers 4, secrets 1, live request hashes 1 +│/);

    expect(await sealingKeys(ba)).toEqual(['kb', 'kb', 'kb', 'kb', 'kb']);
    // Every answer in the binary form, the text form's and the clear one's too.
    const { answers } = await sealedValues(ba.db);
    expect(answers.map((x) => Buffer.isBuffer(x.body))).toEqual([true, true, true, true]);
    expect(await replays(ba)).toEqual(underA);

    const again = await runOpsCli(ba.app.url, ['reencrypt']);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^0 stored value\(s\) to re-seal/);
    expect(again.stdout).toMatch(/│ re-sealed +│ 0 +│/);
  });

  it('afterwards B alone opens every stored answer and secret', async () => {
    const onlyB = testKeyring(KEY_B);
    const { answers, secrets } = await sealedValues(stack!.db);
    expect(answers).toHaveLength(4);
    for (const a of answers) {
      const scope = { tenantId: a.tenantId, operation: { id: a.operation }, key: a.key };
      expect(openStoredAnswer(onlyB, scope, a.body as JsonValue | Buffer)).toBeTypeOf('object');
    }
    expect(secrets).toHaveLength(1);
    for (const s of secrets) {
      expect(openWebhookSecret(onlyB, s, s.secret)).toMatch(/^whsec_/);
    }
  });

  it('a gateway with B alone replays what B hashed, and refuses, naming A, what A hashed', async () => {
    const ba = stack!;
    const newInput = { query: CREATE_PAYMENT, input: paymentInput('rot-new'), name: 'new' };
    const beforeB = (await send(ba, newInput)).text;
    const b = await restartWith(KEY_B);
    expect((await send(b, newInput)).text).toBe(beforeB);
    // A request hash keyed by A cannot be checked without A: refused, never taken as new or
    // as another request. A may leave the keyring only once such keys are past their window.
    const refused = await send(b, REQUESTS[0]!);
    expect(refused.status).toBe(500);
    expect(findCause(b.errors, DataKeyUnknownError)?.keyId).toBe('ka');
  });

  it('ops reencrypt reports a value under a key nobody holds, leaves it as it is, and fails', async () => {
    const b = stack!;
    const ghost = testKeyring(`ghost:${Buffer.alloc(32, 0x66).toString('base64')}`);
    const { answers } = await sealedValues(b.db);
    const target = answers.find((a) => a.key === 'rot-new')!;
    const scope = {
      tenantId: target.tenantId,
      operation: { id: target.operation },
      key: target.key,
    };
    const answer = openStoredAnswer(
      b.app.services.deps.keyring,
      scope,
      target.body as JsonValue | Buffer,
    );
    const underGhost = ghost.seal(JSON.stringify(answer), answerAssociatedData(scope));
    await b.db.query(
      `UPDATE idempotency_responses r SET body = to_jsonb($1::text), sealed = NULL
         FROM idempotency_keys k WHERE k.key = 'rot-new' AND r.request_id = k.id`,
      [underGhost],
    );

    const run = await runOpsCli(b.app.url, ['reencrypt']);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/│ could not be opened +│ 1 +│/);
    expect(run.stdout).toMatch(
      /answer of request \d+ \(payments\.create\.v1\): .*data key "ghost"/,
    );
    expect(run.stdout).toMatch(/│ ghost +│ answers 1, secrets 0, live request hashes 0 +│/);
    const after = (await sealedValues(b.db)).answers.find((a) => a.key === 'rot-new');
    expect(after?.body).toBe(underGhost);
  });

  it('ops reencrypt counts bytes that are not an envelope as such, and cannot open them', async () => {
    const b = stack!;
    // One byte: too short to name a key. Only a hand edit could store it; the count must still
    // run, or the operator learns nothing about any key.
    await b.db.query(
      `UPDATE idempotency_responses r SET sealed = '\\x01'::bytea, body = NULL
         FROM idempotency_keys k WHERE k.key = 'rot-hook' AND r.request_id = k.id`,
    );

    const run = await runOpsCli(b.app.url, ['reencrypt']);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/│ could not be opened +│ 2 +│/);
    expect(run.stdout).toMatch(
      /│ \(not an envelope\) +│ answers 1, secrets 0, live request hashes 0 +│/,
    );
  });
});
