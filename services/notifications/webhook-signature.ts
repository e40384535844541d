import { createHmac, randomBytes } from 'node:crypto';

/** Standard Webhooks secrets: "whsec_" and 24 random bytes in base64. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/**
 * The Standard Webhooks signature: HMAC-SHA256, keyed by the secret's bytes, over
 * "<webhook-id>.<webhook-timestamp>.<body>", as "v1,<base64>". Merchants verify it with any
 * Standard Webhooks library; the tests do, with the `standardwebhooks` package.
 */
export function signWebhook(message: {
  secret: string;
  id: string;
  timestamp: number;
  body: string;
}): string {
  const key = Buffer.from(message.secret.replace(/^whsec_/, ''), 'base64');
  const digest = createHmac('sha256', key)
    .update(`${message.id}.${message.timestamp}.${message.body}`)
    .digest('base64');
  return `v1,${digest}`;
}
