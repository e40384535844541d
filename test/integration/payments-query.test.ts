import { describe, expect, it } from 'vitest';
import { errorCodeOf, graphql, paymentOf } from '../support/graphql-client.ts';
import { CREATE_PAYMENT, PAYMENTS_PAGE } from '../support/operations.ts';
import { TENANT_A, useTestStack } from '../support/test-stack.ts';

const stack = useTestStack('payments-query');

interface Page {
  edges: Array<{ cursor: string; node: { id: string; reference: string | null } }>;
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

async function page(variables: Record<string, unknown>): Promise<Page> {
  const answer = await graphql(stack.app.url, {
    apiKey: TENANT_A.apiKey,
    query: PAYMENTS_PAGE,
    variables,
  });
  return answer.body.data?.['payments'] as Page;
}

describe('Query.payments', () => {
  it('pages newest first with cursors, never repeating or skipping, and filters by reference', async () => {
    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      const input = {
        idempotencyKey: `list-${i}`,
        amount: '1.00',
        currency: 'EUR',
        paymentMethod: 'pm_card_visa',
        reference: 'batch-7',
      };
      created.push(
        paymentOf(
          await graphql(stack.app.url, {
            apiKey: TENANT_A.apiKey,
            query: CREATE_PAYMENT,
            variables: { input },
          }),
        ).id,
      );
    }
    const other = {
      idempotencyKey: 'list-other',
      amount: '1.00',
      currency: 'EUR',
      paymentMethod: 'pm_card_visa',
      reference: 'batch-8',
    };
    await graphql(stack.app.url, {
      apiKey: TENANT_A.apiKey,
      query: CREATE_PAYMENT,
      variables: { input: other },
    });

    const seen: string[] = [];
    let after: string | null = null;
    const sizes: number[] = [];
    for (;;) {
      const current: Page = await page({ first: 2, after, reference: 'batch-7' });
      sizes.push(current.edges.length);
      seen.push(...current.edges.map((e) => e.node.id));
      expect(current.edges.every((e) => e.node.reference === 'batch-7')).toBe(true);
      if (!current.pageInfo.hasNextPage) break;
      after = current.pageInfo.endCursor;
    }
    expect(sizes).toEqual([2, 2, 1]);
    expect(seen).toEqual([...created].reverse());
    expect((await page({})).edges).toHaveLength(6); // default page size 20, all references
  });

  it('keeps order across payments created within one millisecond (cursors carry microseconds)', async () => {
    // Four payments 100 µs apart: a millisecond cursor would repeat them from page to page.
    await stack.db.query(
      `INSERT INTO payments (tenant_id, id, status, amount_minor, currency, payment_method, capture_method,
                             reference, provider_key, created_at)
       SELECT $1, gen_random_uuid(), 'SUCCEEDED', 100, 'EUR', 'pm_card_visa', 'AUTOMATIC', 'same-ms',
              'provider_payment_seed_' || i, timestamptz '2026-01-01 00:00:00.000100' + i * interval '100 microseconds'
         FROM generate_series(0, 3) AS i`,
      [stack.tenantIds.a],
    );
    const seen: string[] = [];
    let after: string | null = null;
    for (let guard = 0; guard < 10; guard++) {
      const current: Page = await page({ first: 1, after, reference: 'same-ms' });
      seen.push(...current.edges.map((e) => e.node.id));
      if (!current.pageInfo.hasNextPage) break;
      after = current.pageInfo.endCursor;
    }
    expect(seen).toHaveLength(4);
    expect(new Set(seen).size).toBe(4);
  });

  it('each read sees what changed since the last one (a fresh EntityManager fork per call)', async () => {
    const created = paymentOf(
      await graphql(stack.app.url, {
        apiKey: TENANT_A.apiKey,
        query: CREATE_PAYMENT,
        variables: {
          input: {
            idempotencyKey: 'fresh-reads',
            amount: '1.00',
            currency: 'EUR',
            paymentMethod: 'pm_card_visa',
            reference: 'fresh-reads',
          },
        },
      }),
    );
    const read = async () => {
      const one = await graphql(stack.app.url, {
        apiKey: TENANT_A.apiKey,
        query: `query($id: ID!) { payment(id: $id) { status failureCode } }`,
        variables: { id: created.id },
      });
      const listed = await graphql(stack.app.url, {
        apiKey: TENANT_A.apiKey,
        query: `query { payments(first: 1, reference: "fresh-reads") { edges { node { status } } } }`,
      });
      return {
        one: one.body.data?.['payment'],
        listed: (listed.body.data?.['payments'] as { edges: Array<{ node: unknown }> }).edges[0]
          ?.node,
      };
    };
    expect(await read()).toEqual({
      one: { status: 'SUCCEEDED', failureCode: null },
      listed: { status: 'SUCCEEDED' },
    });
    // A change made behind the API's back (another process, an operator): an identity map
    // shared across requests would go on answering the row it loaded first.
    await stack.db.query(
      `UPDATE payments SET status = 'FAILED', failure_code = 'edited' WHERE tenant_id = $1 AND id = $2`,
      [stack.tenantIds.a, created.id],
    );
    expect(await read()).toEqual({
      one: { status: 'FAILED', failureCode: 'edited' },
      listed: { status: 'FAILED' },
    });
  });

  it('refuses a page size beyond 100 and a cursor it did not issue', async () => {
    for (const variables of [{ first: 101 }, { first: 0 }, { after: 'not-a-cursor' }]) {
      const answer = await graphql(stack.app.url, {
        apiKey: TENANT_A.apiKey,
        query: PAYMENTS_PAGE,
        variables,
      });
      expect(answer.status).toBe(400);
      expect(errorCodeOf(answer)).toBe('BAD_USER_INPUT');
    }
  });
});
