/** The HTTP adapter keeps "nothing happened" apart from "we do not know", against a real local server. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
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
});
