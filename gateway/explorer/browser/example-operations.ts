import type { GraphiQLProps } from 'graphiql';

export type ExampleTab = NonNullable<GraphiQLProps['defaultTabs']>[number];

const CREATE_PAYMENT = `# Takes effect once per idempotencyKey: run it again and the answer is the same payment,
# with idempotency.replayed true. Reload the page (or edit the key) for a new payment.
mutation CreatePayment($input: CreatePaymentInput!) {
  createPayment(input: $input) {
    payment { id status amount currency providerReference failureCode createdAt }
    idempotency { key replayed expiresAt }
  }
}
`;

const PAYMENT = `# Null when the id is absent or another tenant's.
query Payment($id: ID!) {
  payment(id: $id) {
    id status amount currency captureMethod amountCaptured amountRefunded
    reference providerReference failureCode createdAt
    refunds { id amount status reason createdAt }
  }
}
`;

const PAYMENTS = `# Newest first; pass pageInfo.endCursor as $after for the next page.
query Payments($first: Int, $after: String, $reference: String) {
  payments(first: $first, after: $after, reference: $reference) {
    edges { node { id status amount currency reference createdAt } }
    pageInfo { hasNextPage endCursor }
  }
}
`;

const BALANCES = `# Captured minus refunded, per currency, from the ledger.
query Balances {
  balances { currency available }
}
`;

const json = (value: unknown) => JSON.stringify(value, null, 2);

/** The explorer's tabs: one example per operation a merchant starts with (docs/api.md §2). */
export function exampleTabs(idempotencyKey: string): ExampleTab[] {
  return [
    {
      query: CREATE_PAYMENT,
      variables: json({
        input: {
          idempotencyKey,
          amount: '10.50',
          currency: 'EUR',
          paymentMethod: 'pm_card_visa',
          reference: 'explorer-example',
        },
      }),
    },
    { query: PAYMENT, variables: json({ id: 'a payment id from createPayment or payments' }) },
    { query: PAYMENTS, variables: json({ first: 10 }) },
    { query: BALANCES },
  ];
}
