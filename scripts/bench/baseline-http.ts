/**
 * What both baseline servers share: a JSON POST /payments endpoint on plain node:http with a
 * pg pool the size of the gateway's, started as its own process. Each baseline supplies only
 * its handler.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';

/** The gateway's DEFAULT_POOL_MAX: every side gets the same number of connections. */
const POOL_MAX = 20;
/** A payment request is a few hundred bytes; the gateway refuses over 100 KB, and so do we. */
const MAX_BODY_BYTES = 100 * 1024;
const FIELDS = ['tenantId', 'idempotencyKey', 'amount', 'currency', 'paymentMethod', 'reference'];

/** What a client sends: the fields the product's createPayment takes, as plain JSON. */
export type PaymentRequest = Record<
  'tenantId' | 'idempotencyKey' | 'amount' | 'currency' | 'paymentMethod' | 'reference',
  string
>;

export interface Answer {
  status: number;
  /** JSON text: a replay sends its stored text as it is. */
  body: string;
  headers?: Record<string, string>;
}

export type Handler = (pool: pg.Pool, request: PaymentRequest) => Promise<Answer>;

export const json = (status: number, body: unknown): Answer => ({
  status,
  body: JSON.stringify(body),
});

/** Validates just enough that a malformed request cannot reach the database. */
async function readRequest(req: IncomingMessage): Promise<PaymentRequest | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk);
  }
  let fields: Record<string, unknown>;
  try {
    fields = (JSON.parse(Buffer.concat(chunks).toString('utf8')) ?? {}) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (!FIELDS.every((name) => typeof fields[name] === 'string')) return null;
  if (!/^\d{1,15}\.\d{2}$/.test(fields['amount'] as string)) return null;
  return fields as PaymentRequest;
}

function send(res: ServerResponse, answer: Answer): void {
  res.writeHead(answer.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(answer.body),
    ...answer.headers,
  });
  res.end(answer.body);
}

async function serve(
  req: IncomingMessage,
  res: ServerResponse,
  handle: (r: PaymentRequest) => Promise<Answer>,
) {
  if (req.method !== 'POST' || req.url !== '/payments') {
    return send(res, json(404, { error: 'not found' }));
  }
  const request = await readRequest(req);
  if (request === null) return send(res, json(400, { error: 'BAD_REQUEST' }));
  send(res, await handle(request));
}

/**
 * Starts the baseline `name` on an ephemeral loopback port, prints `<name> listening on URL`
 * (the bench waits for that line) and stops on SIGTERM.
 */
export async function runBaseline(name: string, handler: Handler): Promise<void> {
  const databaseUrl = process.env['DATABASE_URL'];
  if (!databaseUrl || !process.env['PSP_URL']) throw new Error('DATABASE_URL and PSP_URL required');
  const pool = new pg.Pool({ connectionString: databaseUrl, max: POOL_MAX });
  pool.on('error', () => undefined);
  const server = createServer((req, res) => {
    serve(req, res, (request) => handler(pool, request)).catch((error: unknown) => {
      console.error(`[${name}]`, error);
      if (!res.headersSent) send(res, json(500, { error: 'INTERNAL' }));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  console.log(`${name} listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  process.once('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => void pool.end().then(() => process.exit(0)));
  });
}
