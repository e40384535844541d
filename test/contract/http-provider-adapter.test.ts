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
