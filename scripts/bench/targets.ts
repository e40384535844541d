/**
 * The three systems under load, behind one interface: send createPayment for a key, and say
 * what came back. The product speaks GraphQL; the baselines take the same fields as plain JSON.
 */

export type SystemName = 'product' | 'reference' | 'bare';

/** What a request got: a payment (new or replayed), the key busy (a duplicate in flight), or not. */
export type Reply =
  { kind: 'succeeded'; replayed: boolean } | { kind: 'in_use' } | { kind: 'error'; detail: string };

export interface Target {
  name: SystemName;
  /** Whether the system has keys at all: the bare handler has no replays. */
  idempotent: boolean;
  send(key: string, signal: AbortSignal): Promise<Reply>;
}

const MUTATION = `mutation($i: CreatePaymentInput!) { createPayment(input: $i) { payment { id status } idempotency { replayed } } }`;

function fields(key: string): Record<string, string> {
  return {
    idempotencyKey: key,
    amount: '10.00',
    currency: 'EUR',
    paymentMethod: 'pm_card_visa',
    reference: key,
  };
}

/** The full product path: HTTP → Apollo → tRPC → the engine → PostgreSQL and the provider. */
export function productTarget(opts: { url: string; apiKey: string }): Target {
  const endpoint = `${opts.url}/graphql`;
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${opts.apiKey}` };
  return {
    name: 'product',
    idempotent: true,
    async send(key, signal) {
      const response = await fetch(endpoint, {
        method: 'POST',
        headers,
        body: JSON.stringify({ query: MUTATION, variables: { i: fields(key) } }),
        signal,
      });
      const text = await response.text();
      const body = JSON.parse(text) as {
        data?: {
          createPayment?: { payment?: { status?: string }; idempotency?: { replayed?: boolean } };
        };
        errors?: Array<{ extensions?: { code?: string } }>;
      };
      const created = body.data?.createPayment;
      if (created?.payment?.status === 'SUCCEEDED') {
        return { kind: 'succeeded', replayed: created.idempotency?.replayed === true };
      }
      if (body.errors?.[0]?.extensions?.code === 'IDEMPOTENCY_KEY_IN_USE')
        return { kind: 'in_use' };
      return { kind: 'error', detail: `HTTP ${response.status} ${text.slice(0, 300)}` };
    },
  };
}

/** A baseline server's POST /payments. */
export function baselineTarget(opts: {
  name: 'reference' | 'bare';
  url: string;
  tenantId: string;
}): Target {
  const endpoint = `${opts.url}/payments`;
  return {
    name: opts.name,
    idempotent: opts.name === 'reference',
    async send(key, signal) {
      const response = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ tenantId: opts.tenantId, ...fields(key) }),
        signal,
      });
      const text = await response.text();
      if (response.status === 409) return { kind: 'in_use' };
      const body = JSON.parse(text) as { payment?: { status?: string } };
      if (response.status === 200 && body.payment?.status === 'SUCCEEDED') {
        return { kind: 'succeeded', replayed: response.headers.has('idempotent-replayed') };
      }
      return { kind: 'error', detail: `HTTP ${response.status} ${text.slice(0, 300)}` };
    },
  };
}
