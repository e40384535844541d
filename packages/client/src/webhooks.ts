/**
 * verifyWebhook (`@payments-gateway/client/webhooks`): checks a delivery's Standard Webhooks
 * signature (https://www.standardwebhooks.com) and returns its event.
 *
 * What the gateway sends (services/notifications/delivery-handlers.ts, webhook-signature.ts):
 * - `webhook-id`: the event's id, the same on every redelivery: deduplicate on it;
 * - `webhook-timestamp`: Unix seconds of this attempt;
 * - `webhook-signature`: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, keyed by the
 *   bytes of the endpoint's secret (`whsec_<base64>`); during a secret rotation's overlap one
 *   such signature per secret, separated by spaces;
 * - the body: JSON `{ "type", "timestamp", "data" }`.
 *
 * Failure modes this closes: a forged or altered body (the HMAC), a captured delivery replayed
 * later (the timestamp must be within `toleranceSeconds` of now, either way: the signature
 * covers it), a timing oracle on the comparison (timingSafeEqual over equal-length digests),
 * and a body re-serialised by a JSON middleware before it was checked (only the raw bytes are
 * accepted: an object is refused, not stringified).
 *
 * Node's crypto: this entry point is kept apart from the package's main one, which needs
 * nothing but fetch and so runs on any platform.
 */
import { Buffer } from 'node:buffer';
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The event types the gateway delivers today (docs/api.md §2); more may be added. */
export type WebhookEventType =
  | 'payment.succeeded'
  | 'payment.authorized'
  | 'payment.failed'
  | 'payment.captured'
  | 'payment.canceled'
  | 'refund.succeeded'
  /** sendTestWebhookEvent's: `data.endpoint.id` only; nothing happened to money. */
  | 'webhook_endpoint.test';

/** A verified delivery. */
export interface WebhookEvent<TData = Record<string, unknown>> {
  /** The `webhook-id` header: the same on every redelivery of this event. Deduplicate on it. */
  id: string;
  /** A type this SDK knows, or one the gateway added since. */
  type: WebhookEventType | (string & {});
  /** When this attempt was sent (RFC 3339), as in the body. */
  timestamp: string;
  /** The payment events carry `{ payment }`, the payment as the API shows it. */
  data: TData;
}

/** Headers as Node's `req.headers` has them, as a record, or as a fetch `Headers`. */
export type WebhookHeaders =
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

/** The secret, or secrets, and how strict to be about the timestamp. */
export interface VerifyWebhookOptions {
  /** The endpoint's `whsec_…` secret, or several (the new and the old one while rotating). */
  secret: string | readonly string[];
  /** How far `webhook-timestamp` may be from now, either way. Default 300 (5 minutes). */
  toleranceSeconds?: number;
  /** Now, for tests and replays of stored deliveries. Default `Date.now()`. */
  now?: Date | number;
}

export type WebhookVerificationErrorCode =
  /** webhook-id, webhook-timestamp or webhook-signature is absent or empty. */
  | 'MISSING_HEADER'
  /** webhook-timestamp is not Unix seconds. */
  | 'INVALID_TIMESTAMP'
  /** webhook-timestamp is older than the tolerance: a late or replayed delivery. */
  | 'TIMESTAMP_TOO_OLD'
  /** webhook-timestamp is ahead of now by more than the tolerance: a skewed clock, or forged. */
  | 'TIMESTAMP_TOO_NEW'
  /** No `v1` signature matches under any of the secrets: wrong secret, or altered body. */
  | 'INVALID_SIGNATURE'
  /** A secret is not `whsec_` followed by base64. */
  | 'INVALID_SECRET'
  /** The payload is not the raw body (string or bytes), or its signed body is not JSON. */
  | 'INVALID_PAYLOAD';

/** The one error verifyWebhook throws: answer the delivery 400 (or 401) and do nothing with it. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  readonly code: WebhookVerificationErrorCode;

  constructor(code: WebhookVerificationErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** Standard Webhooks' suggested window, and the one the `standardwebhooks` package uses. */
const DEFAULT_TOLERANCE_SECONDS = 5 * 60;
const SECRET_PREFIX = 'whsec_';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Verifies a delivery and returns its event; throws WebhookVerificationError otherwise.
 *
 * `payload` is the raw request body, exactly as received (a string, a Buffer or a Uint8Array):
 * a body parsed and serialised again is not the one that was signed. `secret` is the endpoint's
 * `whsec_…` secret, or several (e.g. the new and the old one while rotating): a delivery passes
 * when any signature matches any of them; or `{ secret, toleranceSeconds, now }`.
 */
export function verifyWebhook<TData = Record<string, unknown>>(
  payload: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string | readonly string[] | VerifyWebhookOptions,
): WebhookEvent<TData> {
  const options: VerifyWebhookOptions =
    typeof secret === 'object' && secret !== null && !Array.isArray(secret)
      ? (secret as VerifyWebhookOptions)
      : { secret: secret as string | readonly string[] };
  const body = bodyBytes(payload);
  const given: unknown = options.secret;
  const secrets: unknown[] =
    typeof given === 'string' ? [given] : Array.isArray(given) ? given : [];
  const keys = secrets.map(secretKey);
  if (keys.length === 0) throw new WebhookVerificationError('INVALID_SECRET', 'no secret given');
  const id = header(headers, 'webhook-id');
  const timestampText = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  checkTimestamp(timestampText, options);

  const signed = Buffer.concat([Buffer.from(`${id}.${timestampText}.`, 'utf8'), body]);
  const expected = keys.map((key) => createHmac('sha256', key).update(signed).digest());
  const offered = signatures
    .split(/\s+/)
    // A header sent twice reaches Node, or a fetch Headers, joined by ", ".
    .map((entry) => entry.replace(/,$/, '').split(','))
    // Other schemes (v1a, asymmetric) and malformed entries are skipped, as the spec says.
    .filter((parts): parts is [string, string] => parts.length === 2 && parts[0] === 'v1')
    .map(([, signature]) => Buffer.from(signature, 'base64'));
  const matches = offered.some((candidate) =>
    expected.some(
      (digest) => candidate.length === digest.length && timingSafeEqual(candidate, digest),
    ),
  );
  if (!matches) {
    throw new WebhookVerificationError(
      'INVALID_SIGNATURE',
      'no v1 signature in webhook-signature matches the payload under the secret given',
    );
  }

  let event: unknown;
  try {
    event = JSON.parse(body.toString('utf8'));
  } catch (cause) {
    throw new WebhookVerificationError('INVALID_PAYLOAD', 'the signed body is not JSON', {
      cause,
    });
  }
  if (typeof event !== 'object' || event === null || Array.isArray(event)) {
    throw new WebhookVerificationError('INVALID_PAYLOAD', 'the signed body is not a JSON object');
  }
  return { ...(event as Omit<WebhookEvent<TData>, 'id'>), id };
}

function bodyBytes(payload: unknown): Buffer {
  if (typeof payload === 'string') return Buffer.from(payload, 'utf8');
  if (payload instanceof Uint8Array) {
    return Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  }
  throw new WebhookVerificationError(
    'INVALID_PAYLOAD',
    'pass the raw request body (a string or a Buffer), not a parsed object: ' +
      'JSON serialised again is not the body that was signed',
  );
}

function secretKey(secret: unknown): Buffer {
  if (typeof secret !== 'string' || !secret.startsWith(SECRET_PREFIX)) {
    throw new WebhookVerificationError(
      'INVALID_SECRET',
      "a webhook secret starts with 'whsec_' (the endpoint's `secret`, as registered or rotated)",
    );
  }
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (encoded === '' || !BASE64.test(encoded)) {
    throw new WebhookVerificationError('INVALID_SECRET', "a webhook secret is 'whsec_' + base64");
  }
  return Buffer.from(encoded, 'base64');
}

function header(headers: WebhookHeaders, name: string): string {
  let value: string | readonly string[] | null | undefined;
  if (typeof headers.get === 'function') {
    value = (headers as { get(name: string): string | null }).get(name);
  } else {
    const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
    // Node lower-cases header names; a record built by hand may not have.
    const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
    value = key === undefined ? undefined : record[key];
  }
  const text = typeof value === 'string' ? value : value?.join(' ');
  if (text === undefined || text.trim() === '') {
    throw new WebhookVerificationError('MISSING_HEADER', `the ${name} header is missing`);
  }
  return text.trim();
}

function checkTimestamp(text: string, options: VerifyWebhookOptions): void {
  if (!/^\d{1,15}$/.test(text)) {
    throw new WebhookVerificationError(
      'INVALID_TIMESTAMP',
      `webhook-timestamp is not Unix seconds: ${text.slice(0, 40)}`,
    );
  }
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (!(tolerance >= 0)) throw new RangeError('toleranceSeconds must be >= 0');
  const nowSeconds = Math.floor(Number(options.now ?? Date.now()) / 1000);
  const timestamp = Number(text);
  if (nowSeconds - timestamp > tolerance) {
    throw new WebhookVerificationError(
      'TIMESTAMP_TOO_OLD',
      `webhook-timestamp is ${nowSeconds - timestamp} s old, more than ${tolerance} s`,
    );
  }
  if (timestamp - nowSeconds > tolerance) {
    throw new WebhookVerificationError(
      'TIMESTAMP_TOO_NEW',
      `webhook-timestamp is ${timestamp - nowSeconds} s ahead of now, more than ${tolerance} s`,
    );
  }
}
