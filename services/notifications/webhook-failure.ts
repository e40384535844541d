import { WebhookAddressNotAllowedError } from './notifications.errors.ts';

/**
 * What a tenant is told of a failed webhook attempt (outbox_deliveries.last_error, shown as
 * `WebhookDelivery.lastError`, docs/api.md §2): one class of this closed set, or
 * `http_status: N` for an answer of its own server. Never the error's text: a socket error names
 * the addresses a name resolved to and the port it tried, a refused versus a timed-out connect
 * tells open ports from closed ones, and OpenSSL's messages carry our build's file paths. The
 * detail goes to our log (delivery-handlers.ts), where an operator can read it.
 */
export const WEBHOOK_FAILURE_CLASSES = [
  /** No answer within the delivery's timeout (connect or response). */
  'timeout',
  /** The endpoint's host refused the connection: nothing listens on that port. */
  'connection_refused',
  /** The connection was cut before the answer was complete. */
  'connection_reset',
  /** The host name does not resolve. */
  'dns_error',
  /** The TLS handshake failed: certificate, protocol or cipher. */
  'tls_error',
  /** The URL's address or port is one webhooks may not reach (docs/api.md §1.4). */
  'address_not_allowed',
  /** Any other failure to reach the endpoint (no route to the host, a protocol error). */
  'network_error',
  /** The attempt failed on our side before the endpoint was reached; retried all the same. */
  'internal_error',
] as const;

export type WebhookFailureClass = (typeof WEBHOOK_FAILURE_CLASSES)[number];

/** An answer outside 2xx: the tenant's own server said so, and its status is theirs to see. */
export function httpStatusFailure(status: number): string {
  return `http_status: ${status}`;
}

const TIMEOUT_CODES = new Set([
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET']);
const DNS_CODES = new Set(['ENOTFOUND', 'ENODATA', 'ESERVFAIL', 'EREFUSED', 'ETIMEOUT']);
/** OpenSSL's certificate verdicts, which Node passes on as codes without a common prefix. */
const CERTIFICATE_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'HOSTNAME_MISMATCH',
  'EPROTO',
]);

/**
 * The class of a failure of webhook egress (WebhookEgress.post), from codes and types only,
 * never from message text; the first link of the cause chain that has a class decides.
 */
export function webhookFailureOf(error: unknown): WebhookFailureClass {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    const found = classOf(e);
    if (found !== undefined) return found;
  }
  return 'network_error';
}

function classOf(error: Error): WebhookFailureClass | undefined {
  if (error instanceof WebhookAddressNotAllowedError) return 'address_not_allowed';
  // AbortSignal.timeout's reason; an abort is only ever our timeout here.
  if (error.name === 'TimeoutError' || error.name === 'AbortError') return 'timeout';
  const { code, syscall } = error as NodeJS.ErrnoException;
  if (typeof code !== 'string') return undefined;
  // Before the socket codes: a resolver that cannot reach its server says ECONNREFUSED too.
  if (syscall === 'getaddrinfo' || DNS_CODES.has(code) || code.startsWith('EAI_'))
    return 'dns_error';
  if (TIMEOUT_CODES.has(code)) return 'timeout';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (RESET_CODES.has(code)) return 'connection_reset';
  if (CERTIFICATE_CODES.has(code) || code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_'))
    return 'tls_error';
  return undefined;
}

/** Why a delivery was abandoned without a failed attempt: our own words, shown as they are. */
export const ENDPOINT_GONE = 'endpoint disabled or removed';
export const ENDPOINT_ANSWERED_410 = 'endpoint answered 410 Gone; disabled';

const SHOWN_AS_STORED: ReadonlySet<string> = new Set<string>([
  ...WEBHOOK_FAILURE_CLASSES,
  ENDPOINT_GONE,
  ENDPOINT_ANSWERED_410,
]);
const HTTP_STATUS_FAILURE = /^http_status: \d{3}$/;
/** How answers were stored before the classes: `HTTP 503`, `gave up after 18 attempts: HTTP 503`. */
const LEGACY_HTTP_STATUS = /^(?:gave up after \d+ attempts: )?HTTP (\d{3})\b/;
const LEGACY_ADDRESS_REFUSAL = /^(?:gave up after \d+ attempts: )?address not allowed: /;

/**
 * A delivery's stored error as the tenant may see it. Rows written before the classes (or by a
 * path that stores an error's message, such as the dispatcher's) hold free text with addresses
 * and library messages in it: it is shown as its class, never as written.
 */
export function shownDeliveryError(stored: string | null): string | null {
  if (stored === null || SHOWN_AS_STORED.has(stored) || HTTP_STATUS_FAILURE.test(stored))
    return stored;
  const status = LEGACY_HTTP_STATUS.exec(stored)?.[1];
  if (status !== undefined) return httpStatusFailure(Number(status));
  return LEGACY_ADDRESS_REFUSAL.test(stored) ? 'address_not_allowed' : 'network_error';
}
