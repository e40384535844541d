import { readFileSync } from 'node:fs';
import { buildSchema, Kind, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import {
  MAX_ALIASES,
  MAX_DOCUMENT_COST,
  MAX_DOCUMENT_TOKENS,
  MAX_ROOT_MUTATION_FIELDS,
} from '../../gateway/graphql/limits.ts';
import { errorCodeOf, graphql, type GraphQLAnswer } from '../support/graphql-client.ts';
import { countRows, keyRowOf, TENANT_A, useTestStack } from '../support/test-stack.ts';

const stack = useTestStack('edge_documents');

const send = (query: string, variables?: Record<string, unknown>) =>
  graphql(stack.app.url, { apiKey: TENANT_A.apiKey, query, variables });

async function metricsText(): Promise<string> {
  return (await fetch(`${stack.app.url}/metrics`)).text();
}

describe('hostile documents are refused at the parser, with a stable code', () => {
  it('answers GRAPHQL_PARSE_FAILED for literals nested beyond the token limit', async () => {
    const depth = MAX_DOCUMENT_TOKENS;
    const literal = `${'['.repeat(depth)}1${']'.repeat(depth)}`;
    const answer = await send(
      `mutation { createPayment(input: { idempotencyKey: "deep-1", amount: "1.00", currency: "EUR", paymentMethod: "pm_card_visa", metadata: { a: ${literal} } }) { payment { id } } }`,
    );
    expect(answer.status).toBe(400);
    expect(errorCodeOf(answer)).toBe('GRAPHQL_PARSE_FAILED');
    // The parser's own limit, not a stack overflow that happened to be caught.
    expect(answer.body.errors?.[0]?.message).toMatch(/Document contains more th\w+ \d+ tokens/);
  });

  it('answers the fan-out document that used to stall validation, and stays responsive', async () => {
    const fragments = Array.from({ length: 8 }, (_, i) =>
      i === 7
        ? `fragment F${i} on Payment { id }`
        : `fragment F${i} on Payment { ${` ...F${i + 1}`.repeat(10)} }`,
    );
    const query = `query { payments { edges { node { ...F0 } } } }\n${fragments.join('\n')}`;
    const [answer, health] = await Promise.all([
      send(query),
      fetch(`${stack.app.url}/healthz`, { signal: AbortSignal.timeout(30_000) }),
    ]);
    expect(answer.body.errors).toBeUndefined();
    expect(health.status).toBe(200);
  });
});

/** `count` createPayment fields, aliased m0, m1, …, each with a key of its own. */
function createPayments(count: number, prefix: string): string {
  return Array.from(
    { length: count },
    (_, i) =>
      `m${i}: createPayment(input: { idempotencyKey: "${prefix}-${i}", amount: "1.00", currency: "EUR", paymentMethod: "pm_card_visa" }) { payment { id } }`,
  ).join('\n');
}

/** The document is refused before anything runs, with this message among its errors. */
async function expectRefused(query: string, message: string): Promise<void> {
  const keysBefore = await countRows(stack.db, 'idempotency_keys');
  const answer = await send(query);
  expect(answer.status, JSON.stringify(answer.body)).toBe(400);
  expect(errorCodeOf(answer)).toBe('GRAPHQL_VALIDATION_FAILED');
  expect(answer.body.errors?.map((e) => e.message)).toContain(message);
  expect(answer.body.data).toBeUndefined();
  expect(await countRows(stack.db, 'idempotency_keys')).toBe(keysBefore);
}

const ROOT_FIELDS_REFUSAL = `a mutation may have at most ${MAX_ROOT_MUTATION_FIELDS} root fields`;

describe('the limits count the fields that will run, through fragments (docs/api.md §1.4)', () => {
  it('refuses more root mutations than the limit inside an inline fragment', async () => {
    const query = `mutation { ... on Mutation { ${createPayments(MAX_ROOT_MUTATION_FIELDS + 1, 'inline')} } }`;
    await expectRefused(query, ROOT_FIELDS_REFUSAL);
  });

  it('refuses more root mutations than the limit behind fragment spreads', async () => {
    const query = `mutation { ...Some ... on Mutation { ...More } }
      fragment Some on Mutation { ${createPayments(6, 'spread-a')} }
      fragment More on Mutation { ${createPayments(6, 'spread-b')} }`;
    await expectRefused(query, ROOT_FIELDS_REFUSAL);
  });

  it('counts the aliases of a fragment at every spread', async () => {
    const half = Math.floor(MAX_ALIASES / 2) + 1;
    const aliases = Array.from({ length: half }, (_, i) => `a${i}: balances { currency }`);
    const query = `{ ...Aliased ... on Query { ...Aliased } }
      fragment Aliased on Query { ${aliases.join(' ')} }`;
    await expectRefused(query, `the document has more than ${MAX_ALIASES} aliases`);
  });

  it('refuses fifteen aliased pages of a hundred payments with the cost and the limit', async () => {
    const pages = Array.from(
      { length: 15 },
      (_, i) => `p${i}: payments(first: 100) { edges { node { id amount } } }`,
    );
    await expectRefused(
      `{ ${pages.join(' ')} }`,
      `the document costs ${15 * 100}, over the limit of ${MAX_DOCUMENT_COST}: each paginated ` +
        'field costs its page size (a variable counts as the largest page) times the pages ' +
        'above it; ask for smaller or fewer pages',
    );
  });

  it('counts pages behind fragments, and a page size from a variable as the largest page', async () => {
    const overBySpreads = `{ ...Pages ...Pages }
      fragment Pages on Query { ${Array.from({ length: 3 }, (_, i) => `p${i}: payments(first: 100) { edges { cursor } }`).join(' ')} }`;
    expect(errorCodeOf(await send(overBySpreads))).toBe('GRAPHQL_VALIDATION_FAILED');
    const pages = (count: number) =>
      Array.from(
        { length: count },
        (_, i) => `p${i}: payments(first: $first) { edges { cursor } }`,
      );
    const atTheLimit = `query($first: Int) { ${pages(MAX_DOCUMENT_COST / 100).join(' ')} }`;
    const overTheLimit = `query($first: Int) { ${pages(MAX_DOCUMENT_COST / 100 + 1).join(' ')} }`;
    expect((await send(atTheLimit, { first: 1 })).body.errors).toBeUndefined();
    const refused = await send(overTheLimit, { first: 1 });
    expect(refused.status).toBe(400);
    expect(refused.body.errors?.[0]?.message).toMatch(/^the document costs 600, over the limit/);
  });

  it('passes every document the SDK sends', async () => {
    const source = readFileSync(
      new URL('../../packages/client/src/operations.graphql', import.meta.url),
      'utf8',
    );
    const operations = parse(source).definitions.flatMap((d) =>
      d.kind === Kind.OPERATION_DEFINITION && d.name ? [d.name.value] : [],
    );
    expect(operations.length).toBeGreaterThan(5);
    for (const operationName of operations) {
      const response = await fetch(`${stack.app.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TENANT_A.apiKey}` },
        body: JSON.stringify({ query: source, operationName, variables: { first: 100 } }),
      });
      const body = (await response.json()) as GraphQLAnswer['body'];
      const codes = (body.errors ?? []).map((e) => e.extensions?.['code']);
      expect(codes, `${operationName}: ${JSON.stringify(body)}`).not.toContain(
        'GRAPHQL_VALIDATION_FAILED',
      );
    }
  });
});

describe('a refusal in one of several root fields keeps the partial answer at 200 (docs/api.md §3.1)', () => {
  it('with the mutations inside a fragment: one not found, one made', async () => {
    const query = `mutation { ... on Mutation {
      made: createPayment(input: { idempotencyKey: "partial-made", amount: "1.00", currency: "EUR", paymentMethod: "pm_card_visa" }) { payment { id } }
      ...Missing
    } }
    fragment Missing on Mutation {
      missing: capturePayment(input: { idempotencyKey: "partial-missing", paymentId: "00000000-0000-4000-8000-000000000000" }) { payment { id } }
    }`;
    const answer = await send(query);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.errors?.map((e) => [e.path, e.extensions?.['code']])).toEqual([
      [['missing'], 'PAYMENT_NOT_FOUND'],
    ]);
    // The payload is non-null, so `data` is null as a whole; the made payment's key finished.
    expect((await keyRowOf(stack.db, 'partial-made'))?.['state']).toBe('finished');
  });

  it('with the queries inside a fragment: one refused, one answered', async () => {
    const answer = await send(
      '{ ... on Query { balances { currency } payments(first: 1000) { edges { cursor } } } }',
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.errors?.map((e) => [e.path, e.extensions?.['code']])).toEqual([
      [['payments'], 'BAD_USER_INPUT'],
    ]);
  });

  it("still gives a sole root field its code's status, inside a fragment too", async () => {
    const answer = await send(
      `mutation { ... on Mutation { capturePayment(input: { idempotencyKey: "sole-missing", paymentId: "00000000-0000-4000-8000-000000000000" }) { payment { id } } } }`,
    );
    expect(answer.status).toBe(404);
    expect(errorCodeOf(answer)).toBe('PAYMENT_NOT_FOUND');
  });
});

describe('graphql_request_duration_seconds labels only what the schema names', () => {
  it('never turns a client-chosen name into a series', async () => {
    const names = Array.from({ length: 30 }, (_, i) => `someRandomName${i}x${Date.now() % 1000}`);
    for (const name of names) expect((await send(`{ ${name} }`)).status).toBe(400);
    await send(`mutation { ${names[0]} }`);
    await send(`{ balances { currency } ${names[1]}: balances { currency } }`);
    await send('{ payment(id: "00000000-0000-0000-0000-000000000000") { id } }');
    await send('{ __typename }');
    const text = await metricsText();
    for (const name of names) expect(text).not.toContain(name);
    const operations = new Set(
      [...text.matchAll(/graphql_request_duration_seconds_count\{[^}]*operation="([^"]+)"/g)].map(
        (m) => m[1],
      ),
    );
    const schema = buildSchema(
      readFileSync(new URL('../../schema/payments.graphql', import.meta.url), 'utf8'),
    );
    const rootFields = [schema.getQueryType(), schema.getMutationType()].flatMap((type) =>
      Object.keys(type?.getFields() ?? {}),
    );
    expect(operations).toContain('invalid');
    expect(operations).toContain('multiple');
    for (const operation of operations)
      expect([...rootFields, 'invalid', 'multiple']).toContain(operation);
  });

  it('names the root field a fragment wraps, and counts the fields a fragment holds', async () => {
    const count = async (operation: string) => {
      const line = new RegExp(
        `^graphql_request_duration_seconds_count\\{[^}]*operation="${operation}"[^}]*\\} (\\d+)$`,
        'm',
      ).exec(await metricsText());
      return Number(line?.[1] ?? 0);
    };
    const before = { create: await count('createPayment'), balances: await count('balances') };
    const multipleBefore = await count('multiple');
    const create = (key: string) =>
      `createPayment(input: { idempotencyKey: "${key}", amount: "1.00", currency: "EUR", paymentMethod: "pm_card_visa" }) { payment { id } }`;
    expect(
      (await send(`mutation { ... on Mutation { ${create('label-inline')} } }`)).body.errors,
    ).toBeUndefined();
    expect(
      (
        await send(
          `mutation { ...Create } fragment Create on Mutation { ${create('label-spread')} }`,
        )
      ).body.errors,
    ).toBeUndefined();
    await send('{ ...B ... on Query { ...B } } fragment B on Query { balances { currency } }');
    await send('{ ... on Query { a: balances { currency } b: balances { currency } } }');
    await send(
      'query($skip: Boolean!) { balances { currency } payment(id: "x") @skip(if: $skip) { id } }',
      { skip: true },
    );
    expect(await count('createPayment')).toBe(before.create + 2);
    expect(await count('balances')).toBe(before.balances + 2);
    expect(await count('multiple')).toBe(multipleBefore + 1);
  });
});
