/**
 * Every method of the client, over a fetch that answers whatever root field it is asked for:
 * each sends its own generated document, whose one root field is the method's name, and reads
 * its answer from that field; each mutation sends `input` with a key of its own and keeps it
 * on every attempt. The table below is typed by PaymentsClient, so a method added without a
 * line here does not compile. (What each does against the gateway: against-gateway.test.ts,
 * webhooks-against-gateway.test.ts.)
 */
import { Kind, OperationTypeNode, parse, type OperationDefinitionNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import {
  createPaymentsClient,
  type FetchLike,
  type PaymentsClient,
} from '../../packages/client/src/index.ts';

interface Sent {
  operation: OperationDefinitionNode;
  variables: Record<string, unknown>;
  operationName: string | undefined;
}

/** Answers `{ data: { <root field>: { answeredFor } } }`; the first `lose` answers get lost. */
function echoingFetch(lose = 0): { fetch: FetchLike; sent: Sent[] } {
  const sent: Sent[] = [];
  const fetch: FetchLike = (_url, init) => {
    const body = JSON.parse(init.body) as {
      query: string;
      variables: Record<string, unknown>;
      operationName?: string;
    };
    const [operation] = parse(body.query).definitions.filter(
      (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
    );
    if (operation === undefined) throw new Error('no operation');
    sent.push({ operation, variables: body.variables, operationName: body.operationName });
    if (sent.length <= lose) return Promise.reject(new TypeError('fetch failed'));
    const fields = operation.selectionSet.selections.flatMap((s) =>
      s.kind === Kind.FIELD ? [s.name.value] : [],
    );
    const data = Object.fromEntries(fields.map((field) => [field, { answeredFor: field }]));
    return Promise.resolve({
      status: 200,
      headers: new Headers(),
      text: () => Promise.resolve(JSON.stringify({ data })),
    });
  };
  return { fetch, sent };
}

type Method = Exclude<keyof PaymentsClient, 'request'>;

/** One call of each method; `mutation` says whether it is keyed. */
const CALLS: Record<Method, { mutation: boolean; call: (c: PaymentsClient) => Promise<unknown> }> =
  {
    createPayment: {
      mutation: true,
      call: (c) => c.createPayment({ amount: '1.00', currency: 'EUR', paymentMethod: 'pm_x' }),
    },
    capturePayment: { mutation: true, call: (c) => c.capturePayment({ paymentId: 'p' }) },
    refundPayment: {
      mutation: true,
      call: (c) => c.refundPayment({ paymentId: 'p', amount: '1.00' }),
    },
    cancelPayment: { mutation: true, call: (c) => c.cancelPayment({ paymentId: 'p' }) },
    registerWebhookEndpoint: {
      mutation: true,
      call: (c) => c.registerWebhookEndpoint({ url: 'https://example.com/hooks' }),
    },
    updateWebhookEndpoint: {
      mutation: true,
      call: (c) => c.updateWebhookEndpoint({ endpointId: 'e', enabled: false }),
    },
    deleteWebhookEndpoint: {
      mutation: true,
      call: (c) => c.deleteWebhookEndpoint({ endpointId: 'e' }),
    },
    rotateWebhookSecret: {
      mutation: true,
      call: (c) => c.rotateWebhookSecret({ endpointId: 'e', overlapSeconds: 60 }),
    },
    redeliverWebhookEvent: {
      mutation: true,
      call: (c) => c.redeliverWebhookEvent({ endpointId: 'e', eventId: 'evt' }),
    },
    sendTestWebhookEvent: {
      mutation: true,
      call: (c) => c.sendTestWebhookEvent({ endpointId: 'e' }),
    },
    payment: { mutation: false, call: (c) => c.payment('p') },
    payments: { mutation: false, call: (c) => c.payments({ status: 'FAILED' }) },
    balances: { mutation: false, call: (c) => c.balances() },
    webhookEndpoints: { mutation: false, call: (c) => c.webhookEndpoints() },
    webhookDeliveries: {
      mutation: false,
      call: (c) => c.webhookDeliveries({ endpointId: 'e', first: 5 }),
    },
  };

function clientOver(fetch: FetchLike): PaymentsClient {
  return createPaymentsClient({
    url: 'http://127.0.0.1:9/graphql',
    apiKey: 'sk_test_sdk',
    fetch,
    backoff: { baseMs: 1, capMs: 2 },
  });
}

describe('every method of the client', () => {
  it('is in the table', () => {
    const methods = Object.keys(clientOver(echoingFetch().fetch)).filter((m) => m !== 'request');
    expect(methods.sort()).toEqual(Object.keys(CALLS).sort());
  });

  it.each(Object.entries(CALLS))(
    '%s sends its own document, named after it, and returns its root field',
    async (name, { mutation, call }) => {
      const transport = echoingFetch(1); // the first answer is lost: every method retries it
      const answer = await call(clientOver(transport.fetch));
      expect(answer).toEqual({ answeredFor: name });
      expect(transport.sent).toHaveLength(2);
      const [first, second] = transport.sent;
      const roots = first!.operation.selectionSet.selections;
      expect(roots.map((s) => (s.kind === Kind.FIELD ? s.name.value : s.kind))).toEqual([name]);
      expect(first!.operationName).toBe(name[0]!.toUpperCase() + name.slice(1));
      expect(first!.operation.operation).toBe(
        mutation ? OperationTypeNode.MUTATION : OperationTypeNode.QUERY,
      );
      expect(second!.variables).toEqual(first!.variables);
      const input = first!.variables['input'] as { idempotencyKey?: unknown } | undefined;
      if (mutation) expect(input?.idempotencyKey).toEqual(expect.any(String));
      else expect(input).toBeUndefined();
    },
  );

  it('gives each mutation call a key of its own', async () => {
    const transport = echoingFetch();
    const client = clientOver(transport.fetch);
    await client.deleteWebhookEndpoint({ endpointId: 'e' });
    await client.deleteWebhookEndpoint({ endpointId: 'e' });
    await client.deleteWebhookEndpoint({ endpointId: 'e' }, { idempotencyKey: 'mine' });
    const keys = transport.sent.map(
      (s) => (s.variables['input'] as { idempotencyKey: string }).idempotencyKey,
    );
    expect(new Set(keys).size).toBe(3);
    expect(keys[2]).toBe('mine');
  });

  it('sends null where the caller says null, and leaves out what the caller leaves out', async () => {
    const transport = echoingFetch();
    await clientOver(transport.fetch).updateWebhookEndpoint({ endpointId: 'e', eventTypes: null });
    expect(transport.sent[0]!.variables['input']).toEqual({
      endpointId: 'e',
      eventTypes: null,
      idempotencyKey: expect.any(String) as string,
    });
  });
});
