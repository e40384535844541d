import { readFileSync } from 'node:fs';
import { buildSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { MAX_DOCUMENT_TOKENS } from '../../gateway/graphql/limits.ts';
import { errorCodeOf, graphql } from '../support/graphql-client.ts';
import { TENANT_A, useTestStack } from '../support/test-stack.ts';

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
});
