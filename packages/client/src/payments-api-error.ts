/**
 * The one error the SDK throws. Branch on `code` and `retryable`, never on the message.
 *
 * `retryable: true` means the call's outcome is not final: the request may or may not have run,
 * and sending the same call again with the same `idempotencyKey` is safe and may still succeed
 * (a lost response, a timeout, OUTCOME_PENDING after the SDK's attempts or time ran out).
 * `retryable: false` is a final answer: sending it again gets the same refusal.
 */

/** The gateway's codes (docs/api.md §3.1 and the README's error table). */
export type GatewayErrorCode =
  | 'UNAUTHENTICATED'
  | 'GRAPHQL_VALIDATION_FAILED'
  | 'GRAPHQL_PARSE_FAILED'
  | 'BAD_REQUEST'
  | 'PAYLOAD_TOO_LARGE'
  | 'RATE_LIMITED'
  | 'TENANT_READS_BUSY'
  | 'BAD_USER_INPUT'
  | 'IDEMPOTENCY_KEY_INVALID'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'IDEMPOTENCY_KEY_IN_USE'
  | 'INTERNAL_SERVER_ERROR'
  | 'DATABASE_UNAVAILABLE'
  | 'SERVICE_UNAVAILABLE'
  | 'OUTCOME_PENDING'
  | 'PROVIDER_UNAVAILABLE'
  | 'DUPLICATE_REFERENCE'
  | 'REQUEST_ALREADY_APPLIED'
  | 'PAYMENT_NOT_FOUND'
  | 'INVALID_PAYMENT_STATE'
  | 'AMOUNT_EXCEEDS_CAPTURABLE'
  | 'AMOUNT_EXCEEDS_REFUNDABLE'
  | 'WEBHOOK_URL_NOT_ALLOWED'
  | 'WEBHOOK_ENDPOINT_LIMIT_REACHED'
  | 'WEBHOOK_ENDPOINT_NOT_FOUND'
  | 'WEBHOOK_ENDPOINT_DISABLED'
  | 'WEBHOOK_DELIVERY_NOT_FOUND';

/** Codes the SDK gives a failure the gateway did not name. */
export type ClientErrorCode =
  /** The connection failed or was reset before a whole answer arrived: it may have run. */
  | 'NETWORK_ERROR'
  /** An attempt, or the whole call (`timeoutMs`), ran out of time: it may have run. */
  | 'TIMEOUT'
  /** The caller's signal aborted the call: it may have run. */
  | 'ABORTED'
  /** The answer was not a GraphQL response the SDK can read (not JSON, no data, no payload). */
  | 'BAD_RESPONSE'
  /** The keyStore could not read or save the call's key: nothing was sent. */
  | 'KEY_STORE_FAILED'
  /** Options or a document the SDK cannot send: nothing was sent. */
  | 'INVALID_REQUEST';

/** A code the gateway may add later is passed through as it comes. */
export type PaymentsErrorCode = GatewayErrorCode | ClientErrorCode | (string & {});

export interface PaymentsApiErrorDetails {
  code: PaymentsErrorCode;
  message: string;
  /** The last answer's HTTP status; null when no answer arrived (or nothing was sent). */
  httpStatus: number | null;
  retryable: boolean;
  /** Requests sent for this call, the first included. */
  attempts: number;
  /** The X-Request-Id of every attempt, in order: what the gateway's logs are searched by. */
  requestIds: readonly string[];
  /** The key every attempt of a mutation carried: send it again to resume the same call. */
  idempotencyKey?: string;
  /** The payment the call already made, when an answer named one (OUTCOME_PENDING, ...). */
  paymentId?: string;
  /** What the last answer asked to wait before a retry. */
  retryAfterSeconds?: number;
  cause?: unknown;
}

export class PaymentsApiError extends Error {
  override readonly name = 'PaymentsApiError';
  readonly code: PaymentsErrorCode;
  readonly httpStatus: number | null;
  readonly retryable: boolean;
  readonly attempts: number;
  readonly requestIds: readonly string[];
  readonly idempotencyKey: string | undefined;
  readonly paymentId: string | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(details: PaymentsApiErrorDetails) {
    super(details.message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = details.code;
    this.httpStatus = details.httpStatus;
    this.retryable = details.retryable;
    this.attempts = details.attempts;
    this.requestIds = details.requestIds;
    this.idempotencyKey = details.idempotencyKey;
    this.paymentId = details.paymentId;
    this.retryAfterSeconds = details.retryAfterSeconds;
  }
}

/** A refusal before anything was sent: bad options, a document that does not parse. */
export function invalidRequest(message: string, cause?: unknown): PaymentsApiError {
  return new PaymentsApiError({
    code: 'INVALID_REQUEST',
    message,
    httpStatus: null,
    retryable: false,
    attempts: 0,
    requestIds: [],
    cause,
  });
}
