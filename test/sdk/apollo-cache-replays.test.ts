/**
 * A replay in Apollo Client 4's normalised cache (issue 35): create a payment (MANUAL), capture
 * it, retry the create. The retry replays the stored REQUIRES_CAPTURE, as the contract says.
 * Without the SDK's type policies Apollo writes that over the captured payment, and a
 * cache-first read says REQUIRES_CAPTURE while the network says SUCCEEDED; with them the cache
 * keeps SUCCEEDED, and the replay's own result still reads as it was answered (ADR 0041).
 * Against a real gateway, through Apollo's own HttpLink.
 */
import { ApolloClient, gql, HttpLink, InMemoryCache, type TypePolicies } from '@apollo/client';
import { describe, expect, it } from 'vitest';
import {
  CapturePaymentDocument,
  CreatePaymentDocument,
  PaymentDocument,
  paymentsTypePolicies,
} from '../../packages/client/src/index.ts';
import { TENANT_A, useTestStack } from '../support/test-stack.ts';

const stack = useTestStack('apollo-cache-replays');

// The SDK's policies are a plain object; this is the type Apollo's cache takes them as.
const typePolicies: TypePolicies = paymentsTypePolicies;

interface Payment {
  id: string;
  status: string;
  version: number;
}
interface PaymentPayload {
  payment: Payment;
  idempotency: { replayed: boolean };
}

/** A client on its own cache; `sent` counts the requests that reached the network. */
function apolloClient(cache: InMemoryCache) {
  const counter = { sent: 0 };
  const link = new HttpLink({
    uri: `${stack.app.url}/graphql`,
    headers: { authorization: `Bearer ${TENANT_A.apiKey}` },
    fetch: (input, init) => {
      counter.sent += 1;
      return fetch(input, init);
    },
  });
  return { client: new ApolloClient({ link, cache }), counter };
}

/** Create (MANUAL) → capture → the create retried with its key, then the payment read twice. */
async function createCaptureReplay(cache: InMemoryCache, key: string) {
  const { client, counter } = apolloClient(cache);
  const input = {
    idempotencyKey: key,
    amount: '10.00',
    currency: 'EUR',
    paymentMethod: 'pm_card_visa',
    captureMethod: 'MANUAL' as const,
    reference: key,
  };
  const create = () =>
    client.mutate<{ createPayment: PaymentPayload }>({
      mutation: CreatePaymentDocument,
      variables: { input },
    });
  const created = (await create()).data!.createPayment;
  expect(created.payment.status).toBe('REQUIRES_CAPTURE');
  const paymentId = created.payment.id;
  const read = async (fetchPolicy: 'cache-first' | 'network-only') => {
    const before = counter.sent;
    const { data } = await client.query<{ payment: Payment }>({
      query: PaymentDocument,
      variables: { id: paymentId },
      fetchPolicy,
    });
    return { payment: data!.payment, fromNetwork: counter.sent > before };
  };
  // The merchant's page shows the payment: payment(id) is in the cache from now on.
  expect((await read('cache-first')).payment.status).toBe('REQUIRES_CAPTURE');
  const captured = (
    await client.mutate<{ capturePayment: PaymentPayload }>({
      mutation: CapturePaymentDocument,
      variables: { input: { idempotencyKey: `${key}-capture`, paymentId } },
    })
  ).data!.capturePayment;
  expect(captured.payment.status).toBe('SUCCEEDED');

  expect((await read('cache-first')).payment.status).toBe('SUCCEEDED'); // the capture's answer

  const replay = (await create()).data!.createPayment;
  const cacheFirst = await read('cache-first');
  const networkOnly = await read('network-only');
  const cacheFirstAgain = await read('cache-first');
  return { created, captured, replay, cacheFirst, networkOnly, cacheFirstAgain };
}

describe("a replayed createPayment in Apollo's InMemoryCache", () => {
  it('with the SDK type policies: the cache keeps SUCCEEDED; the replay reads as answered', async () => {
    const cache = new InMemoryCache({ typePolicies });
    const run = await createCaptureReplay(cache, 'apollo-with-policies');
    expect(run.replay).toMatchObject({
      payment: { status: 'REQUIRES_CAPTURE', version: run.created.payment.version },
      idempotency: { replayed: true },
    });
    expect(run.replay.payment.version).toBeLessThan(run.captured.payment.version);

    expect(run.cacheFirst).toMatchObject({
      payment: { status: 'SUCCEEDED', version: run.captured.payment.version },
      fromNetwork: false,
    });
    expect(run.networkOnly.payment).toMatchObject({ status: 'SUCCEEDED' });
    expect(run.cacheFirstAgain).toMatchObject({
      payment: { status: 'SUCCEEDED' },
      fromNetwork: false,
    });
    // The payment's own cache object is the captured one; the replay's state is kept apart.
    const id = cache.identify({ __typename: 'Payment', id: run.created.payment.id });
    expect(cache.readFragment({ id, fragment: STATUS })).toMatchObject({ status: 'SUCCEEDED' });
  });

  it('without them (the issue as reported): cache-first says REQUIRES_CAPTURE, the network SUCCEEDED', async () => {
    const run = await createCaptureReplay(new InMemoryCache(), 'apollo-without-policies');
    expect(run.replay.payment.status).toBe('REQUIRES_CAPTURE');
    expect(run.cacheFirst).toMatchObject({
      payment: { status: 'REQUIRES_CAPTURE' },
      fromNetwork: false,
    });
    expect(run.networkOnly.payment).toMatchObject({ status: 'SUCCEEDED' });
  });
});

const STATUS = gql`
  fragment PaymentStatus on Payment {
    status
  }
`;

/**
 * When an answer lacks `version` (a document that did not select it), or one side is a state
 * stored before versions were kept: the rules the policy documents, on the cache alone.
 */
describe('the policy without versions on both sides', () => {
  const READ = gql`
    query Read($id: ID!) {
      payment(id: $id) {
        id
        status
      }
    }
  `;
  const WITH_VERSION = gql`
    query WithVersion($id: ID!) {
      payment(id: $id) {
        id
        status
        version
        updatedAt
      }
    }
  `;
  const WITH_UPDATED_AT = gql`
    query WithUpdatedAt($id: ID!) {
      payment(id: $id) {
        id
        status
        updatedAt
      }
    }
  `;
  const REPLAYED = gql`
    mutation Replayed {
      createPayment(
        input: { idempotencyKey: "k", amount: "1", currency: "EUR", paymentMethod: "pm_x" }
      ) {
        payment {
          id
          status
          version
          updatedAt
        }
      }
    }
  `;
  const payment = (fields: Record<string, unknown>) => ({
    __typename: 'Payment',
    id: 'p1',
    ...fields,
  });
  const statusIn = (cache: InMemoryCache) =>
    (cache.readQuery({ query: READ, variables: { id: 'p1' } }) as { payment: Payment }).payment
      .status;
  const writeReplay = (cache: InMemoryCache, fields: Record<string, unknown>) =>
    cache.writeQuery({
      query: REPLAYED,
      data: { createPayment: { __typename: 'CreatePaymentPayload', payment: payment(fields) } },
    });

  it('an older updatedAt is kept apart when a side has no version', () => {
    const cache = new InMemoryCache({ typePolicies });
    cache.writeQuery({
      query: WITH_UPDATED_AT,
      variables: { id: 'p1' },
      data: { payment: payment({ status: 'SUCCEEDED', updatedAt: '2026-12-05T10:00:02.000Z' }) },
    });
    writeReplay(cache, {
      status: 'REQUIRES_CAPTURE',
      version: 2,
      updatedAt: '2026-12-05T10:00:01.000Z',
    });
    expect(statusIn(cache)).toBe('SUCCEEDED');
  });

  it('a version 0 answer is older than any counted state', () => {
    const cache = new InMemoryCache({ typePolicies });
    cache.writeQuery({
      query: WITH_VERSION,
      variables: { id: 'p1' },
      data: {
        payment: payment({ status: 'SUCCEEDED', version: 1, updatedAt: '2026-12-05T10:00:00Z' }),
      },
    });
    writeReplay(cache, {
      status: 'REQUIRES_CAPTURE',
      version: 0,
      updatedAt: '2026-12-05T10:00:05.000Z',
    });
    expect(statusIn(cache)).toBe('SUCCEEDED');
  });

  it('with nothing to order them by, the newest written wins, as without the policy', () => {
    const cache = new InMemoryCache({ typePolicies });
    cache.writeQuery({
      query: READ,
      variables: { id: 'p1' },
      data: { payment: payment({ status: 'SUCCEEDED' }) },
    });
    writeReplay(cache, {
      status: 'REQUIRES_CAPTURE',
      version: 2,
      updatedAt: '2026-12-05T10:00:01.000Z',
    });
    expect(statusIn(cache)).toBe('REQUIRES_CAPTURE');
  });
});
