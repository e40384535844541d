/**
 * The three systems under load, behind one interface: the request createPayment is for a key,
 * and what an answer means. The product speaks GraphQL; the baselines take the same fields as
 * plain JSON. load.ts sends the requests.
 */
import type { IncomingHttpHeaders } from 'node:http';

export type SystemName = 'product' | 'apollo-reference' | 'reference' | 'bare';

/** What a request got: a payment (new or replayed), the key busy (a duplicate in flight), or not. */
export type Reply =
  { kind: 'succeeded'; replayed: boolean } | { kind: 'in_use' } | { kind: 'error'; detail: string };

type Answer = { status: number; headers: IncomingHttpHeaders; text: string };

export interface Target {
  name: SystemName;
  /** Where the system listens (always 127.0.0.1: load.ts refuses anything else). */
  url: string;
  /** Whether the system has keys at all: the bare handler has no replays. */
  idempotent: boolean;
  request(key: string): { path: string; headers: Record<string, string>; body: string };
  judge(answer: Answer): Reply;
}

const MUTATION = `mutation($i: CreatePaymentInput!) { createPayment(input: $i) { payment { id status } idempotency { replayed } } }`;
const PAYMENT = { amount: '10.00', currency: 'EUR', paymentMethod: 'pm_card_visa' };

/** Enough of an unexpected answer to say what it was, not a page of HTML. */
const unexpected = (answer: Answer): Reply => ({
  kind: 'error',
  detail: `HTTP ${answer.status} ${answer.text.slice(0, 300)}`,
});

/**
 * A system that speaks the product's GraphQL: the product itself (HTTP → Apollo → tRPC → the
 * engine → PostgreSQL and the provider), or the reference behind Apollo (no key: one tenant).
 */
export function graphqlTarget(opts: {
  name: 'product' | 'apollo-reference';
  url: string;
  apiKey?: string;
}): Target {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (opts.apiKey !== undefined) headers['authorization'] = `Bearer ${opts.apiKey}`;
  return {
    name: opts.name,
    url: opts.url,
    idempotent: true,
    request: (key) => ({
      path: '/graphql',
      headers,
      body: JSON.stringify({
        query: MUTATION,
        variables: { i: { ...PAYMENT, idempotencyKey: key, reference: key } },
      }),
    }),
    judge(answer) {
      const body = JSON.parse(answer.text) as {
        data?: {
          createPayment?: { payment?: { status?: string }; idempotency?: { replayed?: boolean } };
        };
        errors?: Array<{ extensions?: { code?: string } }>;
      };
      const created = body.data?.createPayment;
      if (created?.payment?.status === 'SUCCEEDED') {
        return { kind: 'succeeded', replayed: created.idempotency?.replayed === true };
      }
      const code = body.errors?.[0]?.extensions?.code;
      return code === 'IDEMPOTENCY_KEY_IN_USE' ? { kind: 'in_use' } : unexpected(answer);
    },
  };
}

/** A baseline server's POST /payments. */
export function baselineTarget(opts: {
  name: 'reference' | 'bare';
  url: string;
  tenantId: string;
}): Target {
  return {
    name: opts.name,
    url: opts.url,
    idempotent: opts.name === 'reference',
    request: (key) => ({
      path: '/payments',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        ...PAYMENT,
        tenantId: opts.tenantId,
        idempotencyKey: key,
        reference: key,
      }),
    }),
    judge(answer) {
      if (answer.status === 409) return { kind: 'in_use' };
      const body = JSON.parse(answer.text) as { payment?: { status?: string } };
      if (answer.status === 200 && body.payment?.status === 'SUCCEEDED') {
        return { kind: 'succeeded', replayed: answer.headers['idempotent-replayed'] !== undefined };
      }
      return unexpected(answer);
    },
  };
}
