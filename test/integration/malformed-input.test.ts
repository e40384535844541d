import { describe, expect, it } from 'vitest';
import { errorCodeOf, graphql, paymentOf } from '../support/graphql-client.ts';
import { CREATE_PAYMENT } from '../support/operations.ts';
import {
  createPaymentOn,
  keyRowOf,
  paymentInput,
  TENANT_A,
  TENANT_B,
  useTestStack,
} from '../support/test-stack.ts';

const stack = useTestStack('malformed_input');

async function withAuthorization(value: string): Promise<Response> {
  return fetch(`${stack.app.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: value },
    body: JSON.stringify({ query: '{ balances { currency } }' }),
  });
}

describe('a bearer token of any length or shape is a 401', () => {
  it.each([
    ['600 characters', `Bearer ${'a'.repeat(600)}`],
    ['8,000 characters', `Bearer ${'k'.repeat(8_000)}`],
    ['characters outside RFC 6750', 'Bearer sk_test_{"$ne":null}'],
    ['non-ASCII', `Bearer sk_test_${'é'.repeat(10)}`],
    ['no token', 'Bearer'],
    ['another scheme', `Basic ${Buffer.from('a:b').toString('base64')}`],
    ['a valid key with trailing junk', `Bearer ${TENANT_A.apiKey} extra`],
  ])('%s', async (_, value) => {
    const answer = await withAuthorization(value);
    expect(answer.status).toBe(401);
    const body = (await answer.json()) as { errors: Array<{ extensions: { code: string } }> };
    expect(body.errors[0]?.extensions.code).toBe('UNAUTHENTICATED');
  });
});

/** A refused createPayment: BAD_USER_INPUT naming the field, nothing stored, nothing charged. */
async function expectRefusedCreate(key: string, overrides: Record<string, unknown>, field: string) {
  const answer = await createPaymentOn(stack, paymentInput(key, overrides));
  expect(answer.status).toBe(400);
  expect(errorCodeOf(answer)).toBe('BAD_USER_INPUT');
  expect(answer.body.errors?.[0]?.extensions?.['field']).toBe(field);
  expect(await keyRowOf(stack.db, key)).toBeUndefined();
  expect(stack.sandbox.attempts({ reference: key })).toBe(0);
}

describe('control characters in free text are BAD_USER_INPUT, never sent on to PostgreSQL', () => {
  it.each([
    ['reference', { reference: 'ref\u0000nul' }],
    ['description', { description: 'bell\u0007' }],
    ['metadata', { metadata: { note: 'a\u0000b' } }],
    ['metadata', { metadata: { ['key\u0000']: 'v' } }],
    ['metadata', { metadata: { lines: [{ sku: 'x', note: 'esc\u001b[0m' }] } }],
  ])('%s', async (field, overrides) => {
    await expectRefusedCreate(`ctl-${field}-${JSON.stringify(overrides).length}`, overrides, field);
  });

  it('keeps tab and newline', async () => {
    const answer = await createPaymentOn(
      stack,
      paymentInput('ctl-ok', { description: 'line one\n\tline two' }),
    );
    expect(paymentOf(answer).status).toBe('SUCCEEDED');
  });

  it('refuses them in a refund reason and a payment id, before any state', async () => {
    const paid = paymentOf(await createPaymentOn(stack, paymentInput('ctl-paid')));
    const refund = await graphql(stack.app.url, {
      apiKey: TENANT_A.apiKey,
      query: `mutation($input: RefundPaymentInput!) { refundPayment(input: $input) { refund { id } } }`,
      variables: {
        input: {
          idempotencyKey: 'ctl-refund',
          paymentId: paid.id,
          amount: '1.00',
          reason: 'x\u0000',
        },
      },
    });
    expect(errorCodeOf(refund)).toBe('BAD_USER_INPUT');
    const cancel = await graphql(stack.app.url, {
      apiKey: TENANT_A.apiKey,
      query: `mutation($input: CancelPaymentInput!) { cancelPayment(input: $input) { payment { id } } }`,
      variables: { input: { idempotencyKey: 'ctl-cancel', paymentId: `${paid.id}\u0000` } },
    });
    expect(errorCodeOf(cancel)).toBe('BAD_USER_INPUT');
    const search = await graphql(stack.app.url, {
      apiKey: TENANT_A.apiKey,
      query: `query { payments(reference: "a\\u0000b") { edges { cursor } } }`,
    });
    expect(errorCodeOf(search)).toBe('BAD_USER_INPUT');
  });
});

describe('a lone UTF-16 surrogate in any text is BAD_USER_INPUT, at any depth', () => {
  it.each([
    ['metadata', { metadata: { note: '\ud800' } }],
    ['metadata', { metadata: { a: { b: [{ c: 'x\udc00' }] } } }],
    ['metadata', { metadata: { ['\udbff']: 'v' } }],
    ['metadata', { metadata: { deep: { ['k\ude00']: [1, 2] } } }],
    ['description', { description: 'tea \ud83d' }],
    ['reference', { reference: '\ude00ref' }],
  ])('%s', async (field, overrides) => {
    await expectRefusedCreate(`sur-${field}-${JSON.stringify(overrides).length}`, overrides, field);
  });

  it('keeps a well-formed pair', async () => {
    const answer = await createPaymentOn(
      stack,
      paymentInput('sur-ok', {
        description: 'tea \ud83c\udf75',
        metadata: { '\ud83d\ude00': 'ok' },
      }),
    );
    expect(paymentOf(answer).status).toBe('SUCCEEDED');
    const { rows } = await stack.db.query<{ description: string }>(
      `SELECT description FROM payments WHERE id = $1`,
      [paymentOf(answer).id],
    );
    expect(rows[0]?.description).toBe('tea \ud83c\udf75');
  });

  it('refuses one in a refund reason, a payment id and a search, before any state', async () => {
    const paid = paymentOf(await createPaymentOn(stack, paymentInput('sur-paid')));
    const refund = await graphql(stack.app.url, {
      apiKey: TENANT_A.apiKey,
      query: `mutation($input: RefundPaymentInput!) { refundPayment(input: $input) { refund { id } } }`,
      variables: {
        input: {
          idempotencyKey: 'sur-refund',
          paymentId: paid.id,
          amount: '1.00',
          reason: '\ud800',
        },
      },
    });
    expect(errorCodeOf(refund)).toBe('BAD_USER_INPUT');
    const cancel = await graphql(stack.app.url, {
      apiKey: TENANT_A.apiKey,
      query: `mutation($input: CancelPaymentInput!) { cancelPayment(input: $input) { payment { id } } }`,
      variables: { input: { idempotencyKey: 'sur-cancel', paymentId: `${paid.id}\udfff` } },
    });
    expect(errorCodeOf(cancel)).toBe('BAD_USER_INPUT');
    const search = await graphql(stack.app.url, {
      apiKey: TENANT_A.apiKey,
      query: `query($r: String) { payments(reference: $r) { edges { cursor } } }`,
      variables: { r: 'a\ud800' },
    });
    expect(errorCodeOf(search)).toBe('BAD_USER_INPUT');
    expect(await keyRowOf(stack.db, 'sur-refund')).toBeUndefined();
    expect(await keyRowOf(stack.db, 'sur-cancel')).toBeUndefined();
  });
});

describe('a card number is never stored', () => {
  it.each([
    ['paymentMethod', { paymentMethod: 'pm_4242424242424242' }],
    ['reference', { reference: 'order 4242 4242 4242 4242' }],
    ['description', { description: 'paid with 378282246310005' }],
    ['metadata', { metadata: { card: '4000-0566-5566-5556' } }],
    ['metadata', { metadata: { ['6011111111111117']: true } }],
  ])('%s', async (field, overrides) => {
    await expectRefusedCreate(`pan-${field}-${JSON.stringify(overrides).length}`, overrides, field);
    const dump = await stack.db.query<{ t: string }>(
      `SELECT string_agg(p::text, '') AS t FROM payments p`,
    );
    expect(dump.rows[0]?.t ?? '').not.toMatch(/4242424242424242|378282246310005|6011111111111117/);
  });
});

/** Rows of every table a refused request could have written to. */
async function storedRows(): Promise<Record<string, number>> {
  const { rows } = await stack.db.query<Record<string, number>>(
    `SELECT (SELECT count(*)::int FROM idempotency_keys) AS keys,
            (SELECT count(*)::int FROM payments) AS payments,
            (SELECT count(*)::int FROM payment_operations) AS operations,
            (SELECT count(*)::int FROM webhook_endpoints) AS endpoints,
            (SELECT count(*)::int FROM outbox_events) AS events`,
  );
  return { ...rows[0], charges: stack.sandbox.charges().length };
}

/** A mutation refused as BAD_USER_INPUT naming `field`, with nothing stored or charged. */
async function expectScreened(
  request: { query: string; input: Record<string, unknown> },
  field: string,
): Promise<void> {
  const before = await storedRows();
  const answer = await graphql(stack.app.url, {
    apiKey: TENANT_A.apiKey,
    query: request.query,
    variables: { input: request.input },
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(400);
  expect(errorCodeOf(answer)).toBe('BAD_USER_INPUT');
  expect(answer.body.errors?.[0]?.extensions?.['field']).toBe(field);
  expect(answer.body.errors?.[0]?.message).toMatch(/must not contain a card number/);
  expect(await storedRows()).toEqual(before);
}

describe('the card-number screen covers every text of every mutation, in any form', () => {
  let counter = 0;
  it.each([
    ['idempotencyKey', { idempotencyKey: '4111-1111-1111-1111' }],
    ['idempotencyKey', { idempotencyKey: 'order.4111.1111.1111.1111' }],
    ['paymentMethod', { paymentMethod: 'pm_4111_1111_1111_1111' }],
    ['reference', { reference: '4111.1111.1111.1111' }],
    ['reference', { reference: '4111/1111/1111/1111' }],
    ['description', { description: 'card 4111  1111  1111  1111' }],
    ['description', { description: 'card 41-111111-11111111' }],
    ['description', { description: 'card ４１１１１１１１１１１１１１１１' }],
    ['metadata', { metadata: { card: 4111111111111111 } }],
    ['metadata', { metadata: { ['４１１１ １１１１ １１１１ １１１１']: 'as a key' } }],
  ])('createPayment, in %s', async (field, overrides) => {
    counter += 1;
    await expectScreened(
      { query: CREATE_PAYMENT, input: paymentInput(`pan-form-${counter}`, overrides) },
      field,
    );
  });

  it('capture, refund, cancel and the webhook mutations, in keys, reasons, URLs and types', async () => {
    const paid = paymentOf(await createPaymentOn(stack, paymentInput('pan-forms-paid')));
    const pan = '4111 1111.1111 1111';
    const operation = (name: string, type: string) =>
      `mutation($input: ${type}!) { ${name}(input: $input) { __typename } }`;
    const cases: Array<[string, string, Record<string, unknown>]> = [
      [
        'idempotencyKey',
        operation('capturePayment', 'CapturePaymentInput'),
        { idempotencyKey: pan.replaceAll(' ', '-'), paymentId: paid.id },
      ],
      [
        'reason',
        operation('refundPayment', 'RefundPaymentInput'),
        { idempotencyKey: 'pan-refund', paymentId: paid.id, amount: '1.00', reason: pan },
      ],
      [
        'idempotencyKey',
        operation('cancelPayment', 'CancelPaymentInput'),
        { idempotencyKey: '4111111111111111', paymentId: paid.id },
      ],
      [
        'url',
        operation('registerWebhookEndpoint', 'RegisterWebhookEndpointInput'),
        { idempotencyKey: 'pan-hook', url: 'http://127.0.0.1:9/hooks/4111-1111-1111-1111' },
      ],
      [
        'idempotencyKey',
        operation('registerWebhookEndpoint', 'RegisterWebhookEndpointInput'),
        { idempotencyKey: '4111_1111_1111_1111', url: 'http://127.0.0.1:9/hooks' },
      ],
      [
        'eventTypes',
        operation('updateWebhookEndpoint', 'UpdateWebhookEndpointInput'),
        {
          idempotencyKey: 'pan-update',
          endpointId: '00000000-0000-4000-8000-000000000000',
          eventTypes: ['payment.succeeded', pan],
        },
      ],
    ];
    for (const [field, query, input] of cases) await expectScreened({ query, input }, field);
  });

  it('passes ids and keys that only look numeric in part', async () => {
    const answer = await createPaymentOn(
      stack,
      paymentInput('4e5bbaab-3ffd-4690-9611-42381fa3fbb1', {
        reference: 'order 2026-02-14T10:20:30Z',
        metadata: { at: '2026-02-14 10:20:30', items: '4111, 1111, 1111' },
      }),
    );
    expect(paymentOf(answer).status).toBe('SUCCEEDED');
  });
});

describe('a cursor the gateway did not issue is BAD_USER_INPUT', () => {
  const page = (after: string) =>
    graphql(stack.app.url, {
      apiKey: TENANT_A.apiKey,
      query: `query($after: String) { payments(first: 2, after: $after) { edges { cursor } } }`,
      variables: { after },
    });
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const id = 'abcdef00-0000-4000-8000-00000000beef';

  it.each([
    ['garbage', 'not a cursor'],
    ['an overflowing time', encode(['99999999999999999999', id])],
    ['a time past the interval range', encode(['9223372036854775807', id])],
    ['a negative time', encode(['-1', id])],
    ['an extra element', encode(['1', id, 'x'])],
    ['a non-uuid', encode(['1', 'x'])],
    ['padding', `${encode(['1', id])}==`],
    ['an upper-case spelling', encode(['1', id.toUpperCase()])],
  ])('%s', async (_, after) => {
    const answer = await page(after);
    expect(answer.status).toBe(400);
    expect(errorCodeOf(answer)).toBe('BAD_USER_INPUT');
  });

  it('refuses a cursor issued to another tenant, or one whose position was edited', async () => {
    for (const key of ['cur-b-1', 'cur-b-2']) await createPaymentOn(stack, paymentInput(key));
    const issued = (
      (await page('')).body.data?.['payments'] as { edges: Array<{ cursor: string }> }
    ).edges[0]!.cursor;
    const asB = await graphql(stack.app.url, {
      apiKey: TENANT_B.apiKey,
      query: `query($after: String) { payments(first: 2, after: $after) { edges { cursor } } }`,
      variables: { after: issued },
    });
    expect(errorCodeOf(asB)).toBe('BAD_USER_INPUT');
    const [, keyId, mac] = issued.split('.');
    const edited = `${encode(['1', id])}.${keyId}.${mac}`;
    expect(errorCodeOf(await page(edited))).toBe('BAD_USER_INPUT');
    expect(errorCodeOf(await page(`${issued}.x`))).toBe('BAD_USER_INPUT');
  });

  it('accepts the cursors it issued', async () => {
    for (const key of ['cur-1', 'cur-2', 'cur-3']) await createPaymentOn(stack, paymentInput(key));
    const first = await page('');
    const edges = (first.body.data?.['payments'] as { edges: Array<{ cursor: string }> }).edges;
    const next = await page(edges.at(-1)!.cursor);
    expect(next.body.errors).toBeUndefined();
  });
});

describe('deep JSON is refused with a code, not a stack overflow', () => {
  it('metadata nested far deeper than any merchant needs, in variables', async () => {
    const depth = 40_000;
    const body = `{"query":${JSON.stringify(CREATE_PAYMENT)},"variables":{"input":${JSON.stringify(
      paymentInput('deep-vars'),
    ).replace(/}$/, `,"metadata":{"a":${'['.repeat(depth)}${']'.repeat(depth)}}}`)}}}`;
    const answer = await fetch(`${stack.app.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TENANT_A.apiKey}` },
      body,
    });
    expect(answer.status).toBe(400);
    const json = (await answer.json()) as { errors: Array<{ extensions: { code: string } }> };
    expect(json.errors[0]?.extensions.code).toBe('BAD_USER_INPUT');
  });

  it('a literal nested as deep as the token limit allows', async () => {
    const depth = 480;
    const answer = await graphql(stack.app.url, {
      apiKey: TENANT_A.apiKey,
      query: `mutation { createPayment(input: { idempotencyKey: "deep-lit", amount: "1.00", currency: "EUR", paymentMethod: "pm_card_visa", metadata: { a: ${'['.repeat(depth)}${']'.repeat(depth)} } }) { payment { id } } }`,
    });
    expect(answer.status).toBe(400);
    expect(errorCodeOf(answer)).toBe('BAD_USER_INPUT');
  });
});
