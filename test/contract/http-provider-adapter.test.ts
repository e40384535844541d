/** The HTTP adapter keeps "nothing happened" apart from "we do not know", against a real local server. */
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpProviderAdapter } from '../../services/provider/http-provider-adapter.ts';

let server: Server | undefined;
afterEach(
  () => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())),
);

async function providerAnswering(handler: Parameters<typeof createServer>[1]): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const request = {
  idempotencyKey: 'k1',
  amount: '1.00',
  currency: 'EUR',
  paymentMethod: 'pm_card_visa',
  reference: 'r1',
  capture: true,
  timeoutMs: 1_000,
};

describe('http provider adapter', () => {
  it('a 500 after the request may have been applied is a timeout, not unavailable', async () => {
    const url = await providerAnswering((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'INTERNAL' } }));
    });
    expect(await createHttpProviderAdapter(url).charge(request)).toEqual({ kind: 'timeout' });
  });

  it('a 200 whose body was lost is a timeout', async () => {
    const url = await providerAnswering((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"charge":');
      setTimeout(() => res.destroy(), 20);
    });
    expect(await createHttpProviderAdapter(url).charge(request)).toEqual({ kind: 'timeout' });
  });

  it('a 503 is unavailable with its Retry-After', async () => {
    const url = await providerAnswering((_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '7' });
      res.end('{}');
    });
    expect(await createHttpProviderAdapter(url).charge(request)).toEqual({
      kind: 'unavailable',
      retryAfterSeconds: 7,
    });
  });

  it('a refused connection is unavailable: the provider never saw the request', async () => {
    // A port that was just free: nothing listens on it.
    const probe = createTcpServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const adapter = createHttpProviderAdapter(`http://127.0.0.1:${port}`);
    expect(await adapter.charge(request)).toEqual({ kind: 'unavailable', retryAfterSeconds: 1 });
    await adapter.close();
  });

  it('no answer within the deadline is a timeout, and the deadline covers the body', async () => {
    const url = await providerAnswering((_req, res) => {
      // Headers at once, the body never: only a deadline over the whole answer ends the call.
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"charge":');
    });
    const adapter = createHttpProviderAdapter(url);
    const started = Date.now();
    expect(await adapter.charge({ ...request, timeoutMs: 200 })).toEqual({ kind: 'timeout' });
    expect(Date.now() - started).toBeLessThan(5_000);
    server?.closeAllConnections();
    await adapter.close();
  });

  it('sends the idempotency key and the request id, and reads an approval', async () => {
    const seen: Array<Record<string, unknown>> = [];
    const url = await providerAnswering((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        seen.push({ path: req.url, headers: req.headers, body: JSON.parse(body) as unknown });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ charge: { id: 'ch_1' } }));
      });
    });
    const adapter = createHttpProviderAdapter(url);
    expect(await adapter.charge({ ...request, requestId: 'req-1' })).toEqual({
      kind: 'approved',
      providerReference: 'ch_1',
      captured: true,
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.['headers']).toMatchObject({
      'idempotency-key': 'k1',
      'x-request-id': 'req-1',
    });
    expect(seen).toMatchObject([
      {
        path: '/v1/charges',
        body: {
          amount: '1.00',
          currency: 'EUR',
          paymentMethod: 'pm_card_visa',
          reference: 'r1',
          capture: true,
        },
      },
    ]);
    await adapter.close();
  });
});

/** A provider answering each probe path with `answers[path]` (status and JSON body). */
async function providerProbedWith(
  answers: Record<string, { status: number; body: unknown }>,
): Promise<{ url: string; paths: string[] }> {
  const paths: string[] = [];
  const url = await providerAnswering((req, res) => {
    paths.push(req.url ?? '');
    const answer = answers[(req.url ?? '').split('?')[0] ?? ''] ?? {
      status: 404,
      body: { error: { code: 'NOT_FOUND' } },
    };
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer.body));
  });
  return { url, paths };
}

const charge = (idempotencyKey: string) => ({
  id: `ch_${idempotencyKey}`,
  idempotencyKey,
  status: 'captured',
  createdAt: '2026-12-05T00:00:00.000Z',
});
const probe = { idempotencyKey: 'k1', reference: 'order-1', timeoutMs: 1_000 };

describe('http provider adapter probes', () => {
  it('calls a charge missing only when the provider says so in its own words', async () => {
    const { url } = await providerProbedWith({
      '/v1/charges/by-idempotency-key/k1': {
        status: 404,
        body: { error: { code: 'CHARGE_NOT_FOUND' } },
      },
    });
    const adapter = createHttpProviderAdapter(url);
    expect(await adapter.probeCharge(probe)).toEqual({ kind: 'missing' });
    await adapter.close();
  });

  it('a 500 or an unreadable answer to a probe proves nothing: no answer', async () => {
    const { url } = await providerProbedWith({
      '/v1/charges/by-idempotency-key/k1': { status: 500, body: { error: { code: 'OOPS' } } },
      '/v1/refunds/by-idempotency-key/k1': { status: 200, body: { refund: { nope: 1 } } },
    });
    const adapter = createHttpProviderAdapter(url);
    expect(await adapter.probeCharge(probe)).toEqual({ kind: 'timeout' });
    expect(
      await adapter.probeOperation({ kind: 'refund', idempotencyKey: 'k1', timeoutMs: 1_000 }),
    ).toEqual({ kind: 'timeout' });
    await adapter.close();
  });

  it('without a lookup by key, finds the charge among those for its reference', async () => {
    const found = await providerProbedWith({
      '/v1/charges': { status: 200, body: { data: [charge('other'), charge('k1')] } },
    });
    const adapter = createHttpProviderAdapter(found.url);
    expect(await adapter.probeCharge(probe)).toEqual({
      kind: 'found',
      charge: { ...charge('k1'), failureCode: null },
    });
    expect(found.paths).toEqual([
      '/v1/charges/by-idempotency-key/k1',
      '/v1/charges?reference=order-1',
    ]);
    await adapter.close();
    server?.close();
    const none = await providerProbedWith({
      '/v1/charges': { status: 200, body: { data: [charge('other')] } },
    });
    const second = createHttpProviderAdapter(none.url);
    expect(await second.probeCharge(probe)).toEqual({ kind: 'missing' });
    await second.close();
  });

  it('finds a capture, a void and a refund by key, each as operate would answer it', async () => {
    const { url } = await providerProbedWith({
      '/v1/captures/by-idempotency-key/c1': {
        status: 200,
        body: { capture: { id: 'cap_1', chargeId: 'ch_9' } },
      },
      '/v1/voids/by-idempotency-key/v1': {
        status: 404,
        body: { error: { code: 'VOID_NOT_FOUND' } },
      },
      '/v1/refunds/by-idempotency-key/r1': {
        status: 200,
        body: { refund: { id: 're_1', chargeId: 'ch_9' } },
      },
    });
    const adapter = createHttpProviderAdapter(url);
    const probeOf = (kind: 'capture' | 'void' | 'refund', idempotencyKey: string) =>
      adapter.probeOperation({ kind, idempotencyKey, timeoutMs: 1_000 });
    expect(await probeOf('capture', 'c1')).toEqual({ kind: 'found', providerReference: 'ch_9' });
    expect(await probeOf('void', 'v1')).toEqual({ kind: 'missing' });
    expect(await probeOf('refund', 'r1')).toEqual({ kind: 'found', providerReference: 're_1' });
    // A route the provider does not have is not proof that nothing was done.
    expect(await probeOf('void', 'other')).toEqual({ kind: 'timeout' });
    await adapter.close();
  });
});
