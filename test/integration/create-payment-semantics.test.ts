import { describe, expect, it } from 'vitest';
import { errorCodeOf, graphql, paymentOf, type GraphQLAnswer } from '../support/graphql-client.ts';
import { CREATE_PAYMENT } from '../support/operations.ts';
import { countRows, TENANT_A, TENANT_B, useTestStack } from '../support/test-stack.ts';
import { waitUntil } from '../support/wait-until.ts';

const stack = useTestStack('semantics');

let counter = 0;
function unique(prefix: string): string {
  counter += 1;
  // Base 36: a decimal timestamp is a 13-digit run, which the card-number rule may refuse.
  return `${prefix}-${counter}-${Date.now().toString(36)}`;
}

function create(
  input: Record<string, unknown>,
  apiKey: string | null = TENANT_A.apiKey,
  query = CREATE_PAYMENT,
): Promise<GraphQLAnswer> {
  return graphql(stack.app.url, { apiKey, query, variables: { input } });
}

function visa(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const key = unique('key');
  return {
    idempotencyKey: key,
    amount: '10.50',
    currency: 'EUR',
    paymentMethod: 'pm_card_visa',
    reference: `ref-${key}`,
    ...overrides,
  };
}

describe('same key, different command → IDEMPOTENCY_KEY_REUSED, whatever the first request’s state', () => {
  it('while the first request is in flight', async () => {
    const first = visa({ paymentMethod: 'pm_card_slow' });
    const inFlight = create(first);
    await waitUntil(
      async () =>
        (
          await stack.db.query('SELECT 1 FROM idempotency_keys WHERE key = $1', [
            first['idempotencyKey'],
          ])
        ).rowCount === 1,
      { timeoutMs: 5_000, intervalMs: 20, what: 'the first request’s key row' },
    );
    const reused = await create({ ...first, amount: '99.00' });
    expect(reused.status).toBe(422);
    expect(errorCodeOf(reused)).toBe('IDEMPOTENCY_KEY_REUSED');
    const finished = await inFlight;
    expect(paymentOf(finished)).toMatchObject({ status: 'SUCCEEDED', amount: '10.50' });
  });

  it('after success', async () => {
    const first = visa();
    expect(paymentOf(await create(first)).status).toBe('SUCCEEDED');
    const reused = await create({ ...first, amount: '10.51' });
    expect(reused.status).toBe(422);
    expect(errorCodeOf(reused)).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('after a decline, and the first stays as it was', async () => {
    const first = visa({ paymentMethod: 'pm_card_declined' });
    const declined = paymentOf(await create(first));
    expect(declined).toMatchObject({ status: 'FAILED', failureCode: 'CARD_DECLINED' });
    const reused = await create({ ...first, paymentMethod: 'pm_card_visa' });
    expect(errorCodeOf(reused)).toBe('IDEMPOTENCY_KEY_REUSED');
    const replay = await create(first);
    expect(paymentOf(replay)).toEqual(declined);
  });
});

describe('equivalent commands hash the same', () => {
  it('"10.5" and "10.50", "eur" and "EUR", metadata key order and an explicit default replay one payment', async () => {
    const key = unique('equiv');
    const first = await create({
      idempotencyKey: key,
      amount: '10.5',
      currency: 'eur',
      paymentMethod: 'pm_card_visa',
      metadata: { a: 1, b: { c: 2, d: 3 } },
    });
    const again = await create({
      idempotencyKey: key,
      amount: '10.50',
      currency: 'EUR',
      paymentMethod: 'pm_card_visa',
      captureMethod: 'AUTOMATIC',
      metadata: { b: { d: 3, c: 2 }, a: 1 },
    });
    expect(paymentOf(again).id).toBe(paymentOf(first).id);
    expect(again.body.data?.['createPayment']).toMatchObject({ idempotency: { replayed: true } });
    expect(again.body.extensions).toEqual({ idempotency: { replayed: true } });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(first.body.extensions?.['idempotency']).toBeUndefined();
  });

  it('a different amount in the same currency does not', async () => {
    const key = unique('diff');
    await create({
      idempotencyKey: key,
      amount: '10.5',
      currency: 'EUR',
      paymentMethod: 'pm_card_visa',
    });
    expect(
      errorCodeOf(
        await create({
          idempotencyKey: key,
          amount: '10.05',
          currency: 'EUR',
          paymentMethod: 'pm_card_visa',
        }),
      ),
    ).toBe('IDEMPOTENCY_KEY_REUSED');
  });
});

describe('a replay is the stored result, not today’s state', () => {
  it('a retry selecting other fields gets the stored values, even after the payment row changed', async () => {
    const input = visa();
    const narrow = await create(
      input,
      TENANT_A.apiKey,
      // Its own, narrow selection: a retry selecting other fields is what this test is about.
      `mutation($input: CreatePaymentInput!) { createPayment(input: $input) { payment { id } } }`,
    );
    const id = (narrow.body.data?.['createPayment'] as { payment: { id: string } }).payment.id;
    const { rows } = await stack.db.query<{ provider_reference: string; created_at: Date }>(
      'SELECT provider_reference, created_at FROM payments WHERE id = $1',
      [id],
    );
    // Simulate the world moving on: a later capability changes the payment.
    await stack.db.query(`UPDATE payments SET status = 'CANCELED' WHERE id = $1`, [id]);
    const wide = paymentOf(await create(input));
    expect(wide).toMatchObject({
      id,
      status: 'SUCCEEDED',
      amount: '10.50',
      currency: 'EUR',
      providerReference: rows[0]?.provider_reference,
      createdAt: rows[0]?.created_at.toISOString(),
    });
  });

  it('a decline is replayed without a second provider call', async () => {
    const input = visa({ paymentMethod: 'pm_card_declined' });
    const first = paymentOf(await create(input));
    const second = await create(input);
    expect(paymentOf(second)).toEqual(first);
    expect(stack.sandbox.attempts({ reference: input['reference'] as string })).toBe(1);
    expect(stack.sandbox.charges({ reference: input['reference'] as string })).toHaveLength(1);
  });
});

describe('tenants are independent', () => {
  it('the same key on two tenants names two payments; neither can read the other’s', async () => {
    const key = unique('shared');
    const a = paymentOf(
      await create(
        { idempotencyKey: key, amount: '1.00', currency: 'EUR', paymentMethod: 'pm_card_visa' },
        TENANT_A.apiKey,
      ),
    );
    const b = paymentOf(
      await create(
        { idempotencyKey: key, amount: '2.00', currency: 'USD', paymentMethod: 'pm_card_visa' },
        TENANT_B.apiKey,
      ),
    );
    expect(a.id).not.toBe(b.id);
    expect([a.amount, b.amount]).toEqual(['1.00', '2.00']);
    // Its own selection: the owner's answer is compared whole with toEqual({ id, amount }).
    const query = `query($id: ID!) { payment(id: $id) { id amount } }`;
    const crossed = await graphql(stack.app.url, {
      apiKey: TENANT_B.apiKey,
      query,
      variables: { id: a.id },
    });
    expect(crossed.status).toBe(200);
    expect(crossed.body.data).toEqual({ payment: null });
    const own = await graphql(stack.app.url, {
      apiKey: TENANT_A.apiKey,
      query,
      variables: { id: a.id },
    });
    expect(own.body.data).toEqual({ payment: { id: a.id, amount: '1.00' } });
    const list = await graphql(stack.app.url, {
      apiKey: TENANT_B.apiKey,
      query: '{ payments(first: 100) { edges { node { id } } } }',
    });
    const ids = (
      list.body.data?.['payments'] as { edges: Array<{ node: { id: string } }> }
    ).edges.map((e) => e.node.id);
    expect(ids).toContain(b.id);
    expect(ids).not.toContain(a.id);
  });
});

describe('bad input is refused with its code, calls no provider and stores nothing', () => {
  type Case = [
    name: string,
    overrides: Record<string, unknown>,
    apiKey: string | null,
    code: string,
    status: number,
  ];
  /** Tenant A's requests refused as a 400 with `code`: a builder of their cases. */
  const refusedWith =
    (code: string) =>
    (name: string, overrides: Record<string, unknown>): Case => [
      name,
      overrides,
      TENANT_A.apiKey,
      code,
      400,
    ];
  const invalidKey = refusedWith('IDEMPOTENCY_KEY_INVALID');
  const badUserInput = refusedWith('BAD_USER_INPUT');
  /** A request with `apiKey` (null: none), refused as a 401 before anything else is looked at. */
  const unauthenticated = (
    name: string,
    overrides: Record<string, unknown>,
    apiKey: string | null,
  ): Case => [name, overrides, apiKey, 'UNAUTHENTICATED', 401];
  const cases: Case[] = [
    invalidKey('an empty key', { idempotencyKey: '' }),
    invalidKey('a 256-character key', { idempotencyKey: 'k'.repeat(256) }),
    invalidKey('a key with a space', { idempotencyKey: 'order 1' }),
    invalidKey('a key with a slash', { idempotencyKey: 'a/b' }),
    // Order of checks: authentication, then the key (nothing can be scoped without it), then the rest.
    invalidKey('a bad key and a zero amount', { idempotencyKey: 'a b', amount: '0' }),
    invalidKey('an empty key and XXX', { idempotencyKey: '', currency: 'XXX' }),
    unauthenticated('a bad key and no API key', { idempotencyKey: 'a b' }, null),
    unauthenticated('no API key', {}, null),
    unauthenticated('an unknown API key', {}, 'sk_test_nobody_00000000000000000'),
    badUserInput('a zero amount', { amount: '0' }),
    badUserInput('a negative amount', { amount: '-1.00' }),
    badUserInput('an exponent', { amount: '1e3' }),
    badUserInput('too many decimals for EUR', { amount: '10.123' }),
    badUserInput('decimals for JPY', { amount: '1.5', currency: 'JPY' }),
    badUserInput('XXX', { currency: 'XXX' }),
    badUserInput('XTS', { currency: 'XTS' }),
    badUserInput('an unknown currency', { currency: 'ABC' }),
    badUserInput('a malformed token', { paymentMethod: 'card_visa' }),
    badUserInput('a long description', { description: 'd'.repeat(1_001) }),
    badUserInput('a long reference', { reference: 'r'.repeat(256) }),
    badUserInput('large metadata', { metadata: { blob: 'm'.repeat(8_200) } }),
    badUserInput('metadata that is not an object', { metadata: [1, 2] }),
  ];

  it.each(
    cases.map(([name, overrides, apiKey, code, status]) => ({
      name,
      overrides,
      apiKey,
      code,
      status,
    })),
  )('$name → $code', async ({ overrides, apiKey, code, status }) => {
    const before = await Promise.all([
      countRows(stack.db, 'payments'),
      countRows(stack.db, 'idempotency_keys'),
    ]);
    const attemptsBefore = stack.sandbox.attempts();
    const answer = await create(visa(overrides), apiKey);
    expect(errorCodeOf(answer)).toBe(code);
    expect(answer.status).toBe(status);
    expect(stack.sandbox.attempts()).toBe(attemptsBefore);
    expect(
      await Promise.all([countRows(stack.db, 'payments'), countRows(stack.db, 'idempotency_keys')]),
    ).toEqual(before);
  });

  it('JPY and KWD use their own minor units', async () => {
    expect(paymentOf(await create(visa({ amount: '1500', currency: 'jpy' }))).amount).toBe('1500');
    expect(paymentOf(await create(visa({ amount: '1.5', currency: 'KWD' }))).amount).toBe('1.500');
  });

  it('a well-formed token the provider does not know ends as a completed, failed payment', async () => {
    expect(paymentOf(await create(visa({ paymentMethod: 'pm_card_nonexistent' })))).toMatchObject({
      status: 'FAILED',
      failureCode: 'INVALID_PAYMENT_METHOD',
    });
  });
});

describe('document limits (docs/api.md §1.4)', () => {
  it('refuses deep documents, many aliases, many root mutations and large bodies before executing', async () => {
    const shallowEnough = await graphql(stack.app.url, {
      apiKey: TENANT_A.apiKey,
      query: `{ ${deepSelection(10)} }`,
    });
    expect(shallowEnough.status).toBe(200);
    const deep = `{ ${deepSelection(11)} }`; // __type + 11 × ofType + name = 13 levels
    const keysBefore = await countRows(stack.db, 'idempotency_keys');
    const aliases = `{ ${Array.from({ length: 16 }, (_, i) => `a${i}: payment(id: "x") { id }`).join(' ')} }`;
    const roots = `mutation { ${Array.from({ length: 11 }, (_, i) => `m${i}: createPayment(input: { idempotencyKey: "k${i}", amount: "1", currency: "EUR", paymentMethod: "pm_card_visa" }) { payment { id } }`).join(' ')} }`;
    for (const query of [deep, aliases, roots]) {
      const answer = await graphql(stack.app.url, { apiKey: TENANT_A.apiKey, query });
      expect(answer.status).toBe(400);
      expect(errorCodeOf(answer)).toBe('GRAPHQL_VALIDATION_FAILED');
    }
    const big = await fetch(`${stack.app.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TENANT_A.apiKey}` },
      body: JSON.stringify({
        query: '{ payments { edges { cursor } } }',
        padding: 'x'.repeat(101 * 1024),
      }),
    });
    expect(big.status).toBe(413);
    expect(await countRows(stack.db, 'idempotency_keys')).toBe(keysBefore);
  });

  it('a document with several root fields answers 200 with per-field errors', async () => {
    const okKey = unique('multi');
    const query = `mutation {
      ok: createPayment(input: { idempotencyKey: "${okKey}", amount: "1", currency: "EUR", paymentMethod: "pm_card_visa" }) { payment { status } }
      bad: createPayment(input: { idempotencyKey: "bad key", amount: "1", currency: "EUR", paymentMethod: "pm_card_visa" }) { payment { status } }
    }`;
    const answer = await graphql(stack.app.url, { apiKey: TENANT_A.apiKey, query });
    expect(answer.status).toBe(200);
    expect(answer.body.errors).toHaveLength(1);
    expect(answer.body.errors?.[0]).toMatchObject({
      path: ['bad'],
      extensions: { code: 'IDEMPOTENCY_KEY_INVALID' },
    });
    // createPayment's payload is non-null, so GraphQL nulls `data` as a whole when one root
    // field fails; the other mutation still ran, and its result is the key's stored answer.
    const { rows } = await stack.db.query<{ state: string }>(
      'SELECT state FROM idempotency_keys WHERE key = $1',
      [okKey],
    );
    expect(rows).toEqual([{ state: 'finished' }]);
  });
});

function deepSelection(depth: number): string {
  // `__type` introspection nests arbitrarily: ofType { ofType { … } }.
  return `__type(name: "Payment") { ${'ofType { '.repeat(depth)}name${' }'.repeat(depth)} }`;
}
