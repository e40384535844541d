import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll } from 'vitest';

/** One delivery as the merchant saw it: its webhook-id, its event type, whether it verified. */
export interface ReceivedWebhook {
  id: string;
  type: string;
  /** Its Standard Webhooks signature checked out against `secret` as it was on arrival. */
  verified: boolean;
}

export interface WebhookReceiver {
  /** Where to register the endpoint; read it inside hooks and tests (it listens from beforeAll). */
  readonly url: string;
  /** Every delivery, in arrival order, redeliveries included. */
  readonly received: ReceivedWebhook[];
  /** The endpoint's secret, once registered: deliveries are verified against it. */
  secret: string;
  /** What the server answers each delivery; a failure status makes the gateway redeliver. */
  answerStatus: number;
}

/**
 * A merchant's webhook server on 127.0.0.1 for the enclosing file, listening before its tests
 * and closed after them, that verifies every delivery's signature as a merchant would.
 */
export function useWebhookReceiver(options: { answerStatus?: number } = {}): WebhookReceiver {
  let url: string | undefined;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      let verified = false;
      try {
        new Webhook(receiver.secret).verify(body, {
          'webhook-id': String(req.headers['webhook-id']),
          'webhook-timestamp': String(req.headers['webhook-timestamp']),
          'webhook-signature': String(req.headers['webhook-signature']),
        });
        verified = true;
      } catch {
        verified = false;
      }
      receiver.received.push({
        id: String(req.headers['webhook-id']),
        type: (JSON.parse(body) as { type: string }).type,
        verified,
      });
      res.writeHead(receiver.answerStatus).end();
    });
  });
  const receiver: WebhookReceiver = {
    get url(): string {
      if (url === undefined) throw new Error('useWebhookReceiver: .url read before it listened');
      return url;
    },
    received: [],
    secret: '',
    answerStatus: options.answerStatus ?? 200,
  };
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) =>
      server.listening ? server.close(() => resolve()) : resolve(),
    );
  });
  return receiver;
}
