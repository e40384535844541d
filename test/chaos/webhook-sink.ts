/**
 * The merchants' webhook endpoints: one HTTP server in the harness, one path per tenant. It
 * records every delivery (webhook-id, type, payment, whether the Standard Webhooks signature
 * verifies with the tenant's secret) and refuses the first delivery of some events with a 503,
 * chosen from the seed, so redelivery is part of every run.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { hash32 } from './prng.ts';
import type { TenantName } from './plan.ts';

/** Share of events whose first delivery is refused (503). */
const REFUSED_FIRST_DELIVERY_SHARE = 0.1;

export interface WebhookDelivery {
  tenant: TenantName;
  id: string;
  type: string;
  paymentId: string | null;
  paymentStatus: string | null;
  /** The payload as delivered, to compare redeliveries of one event. */
  data: string;
  verified: boolean;
  answered: number;
}

export interface WebhookSink {
  url(tenant: TenantName): string;
  /** The signing secret the gateway gave at registration. */
  setSecret(tenant: TenantName, secret: string): void;
  readonly deliveries: WebhookDelivery[];
  close(): Promise<void>;
}

export async function startWebhookSink(seed: number): Promise<WebhookSink> {
  const deliveries: WebhookDelivery[] = [];
  const verifiers = new Map<TenantName, Webhook>();
  const seen = new Set<string>();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const tenant = request.url === '/hooks/a' ? 'a' : request.url === '/hooks/b' ? 'b' : null;
      const id = String(request.headers['webhook-id'] ?? '');
      if (tenant === null || id === '') {
        response.writeHead(404).end();
        return;
      }
      const raw = Buffer.concat(chunks).toString();
      const first = !seen.has(`${tenant}/${id}`);
      seen.add(`${tenant}/${id}`);
      const refuse = first && hash32(`${seed}/${id}`) / 2 ** 32 < REFUSED_FIRST_DELIVERY_SHARE;
      const answered = refuse ? 503 : 204;
      deliveries.push({
        tenant,
        id,
        ...describe(raw),
        verified: verify({ verifiers, tenant, raw, headers: request.headers }),
        answered,
      });
      response.writeHead(answered).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (tenant) => `http://127.0.0.1:${port}/hooks/${tenant}`,
    setSecret: (tenant, secret) => verifiers.set(tenant, new Webhook(secret)),
    deliveries,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function describe(
  raw: string,
): Pick<WebhookDelivery, 'type' | 'paymentId' | 'paymentStatus' | 'data'> {
  try {
    const body = JSON.parse(raw) as {
      type?: string;
      data?: { payment?: { id?: string; status?: string } };
    };
    return {
      type: body.type ?? '?',
      paymentId: body.data?.payment?.id ?? null,
      paymentStatus: body.data?.payment?.status ?? null,
      data: JSON.stringify(body.data ?? null),
    };
  } catch {
    return { type: 'unparseable', paymentId: null, paymentStatus: null, data: raw };
  }
}

function verify(input: {
  verifiers: Map<TenantName, Webhook>;
  tenant: TenantName;
  raw: string;
  headers: Record<string, string | string[] | undefined>;
}): boolean {
  const verifier = input.verifiers.get(input.tenant);
  if (verifier === undefined) return false;
  const header = (name: string) => String(input.headers[name] ?? '');
  try {
    verifier.verify(input.raw, {
      'webhook-id': header('webhook-id'),
      'webhook-timestamp': header('webhook-timestamp'),
      'webhook-signature': header('webhook-signature'),
    });
    return true;
  } catch {
    return false;
  }
}
