/**
 * What both baseline servers share: a JSON POST /payments endpoint on plain node:http with a
 * pg pool, the same pool size as the gateway's, started as its own process. Each baseline
 * supplies only its handler.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';

/** The gateway's DEFAULT_POOL_MAX: every side gets the same number of connections. */
const POOL_MAX = 20;
/** A payment request is a few hundred bytes; the gateway refuses over 100 KB, and so do we. */
const MAX_BODY_BYTES = 100 * 1024;

/** What a client sends: the fields the product's createPayment takes, as plain JSON. */
export interface PaymentRequest {
  tenantId: string;
  idempotencyKey: string;
  amount: string;
  currency: string;
  paymentMethod: string;
  reference: string;
}

export interface Answer {
  status: number;
  /** JSON text: a replay sends its stored text as it is. */
  body: string;
  headers?: Record<string, string>;
}

export type Handler = (pool: pg.Pool, request: PaymentRequest) => Promise<Answer>;

export function json(status: number, body: unknown): Answer {
  return { status, body: JSON.stringify(body) };
}

/** Validates just enough that a malformed request cannot reach the database. */
function parseRequest(raw: string): PaymentRequest | null {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const fields = value as Record<string, unknown>;
  const names = ['tenantId', 'idempotencyKey', 'amount', 'currency', 'paymentMethod', 'reference'];
  if (!names.every((name) => typeof fields[name] === 'string')) return null;
  if (!/^\d{1,15}\.\d{2}$/.test(fields['amount'] as string)) return null;
  return value as PaymentRequest;
}

async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
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
  ctx: { pool: pg.Pool; handler: Handler },
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  if (req.method !== 'POST' || req.url !== '/payments') {
    return send(res, json(404, { error: 'not found' }));
  }
  const raw = await readBody(req);
  const request = raw === null ? null : parseRequest(raw);
  if (request === null) return send(res, json(400, { error: 'BAD_REQUEST' }));
  send(res, await ctx.handler(ctx.pool, request));
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
    serve({ pool, handler }, req, res).catch((error: unknown) => {
      console.error(`[${name}]`, error);
      if (!res.headersSent) send(res, json(500, { error: 'INTERNAL' }));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  console.log(`${name} listening on http://127.0.0.1:${port}`);
  process.once('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => void pool.end().then(() => process.exit(0)));
  });
}
