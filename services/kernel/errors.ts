/**
 * The one error catalog. Every error a client can see has a stable SCREAMING_SNAKE code here,
 * with its HTTP status and whether it is stored for the idempotency key (and so replayed).
 * Branch on codes, never on message text.
 */
export const ERROR_CATALOG = {
  UNAUTHENTICATED: { httpStatus: 401, stored: false, message: 'Missing or unknown API key.' },
  BAD_USER_INPUT: { httpStatus: 400, stored: false, message: 'The input is not valid.' },
  GRAPHQL_VALIDATION_FAILED: {
    httpStatus: 400,
    stored: false,
    message: 'The GraphQL document is not valid.',
  },
  PAYLOAD_TOO_LARGE: { httpStatus: 413, stored: false, message: 'The request body is too large.' },
  IDEMPOTENCY_KEY_INVALID: {
    httpStatus: 400,
    stored: false,
    message: 'The idempotency key must be 1 to 255 characters of [A-Za-z0-9._:-].',
  },
  IDEMPOTENCY_KEY_REUSED: {
    httpStatus: 422,
    stored: false,
    message: 'This idempotency key was already used with a different request.',
  },
  IDEMPOTENCY_KEY_IN_USE: {
    httpStatus: 409,
    stored: false,
    message: 'A request with this idempotency key is still in flight. Retry after a moment.',
  },
  OUTCOME_PENDING: {
    httpStatus: 202,
    stored: false,
    message: 'The provider has not confirmed the outcome yet. Retry with the same key.',
  },
  PROVIDER_UNAVAILABLE: {
    httpStatus: 503,
    stored: false,
    message: 'The payment provider is unavailable. Nothing was charged; retry with the same key.',
  },
  PAYMENT_NOT_FOUND: { httpStatus: 404, stored: true, message: 'No such payment.' },
  INVALID_PAYMENT_STATE: {
    httpStatus: 422,
    stored: true,
    message: 'The payment is not in a state that allows this operation.',
  },
  AMOUNT_EXCEEDS_CAPTURABLE: {
    httpStatus: 422,
    stored: true,
    message: 'The amount exceeds what can be captured.',
  },
  AMOUNT_EXCEEDS_REFUNDABLE: {
    httpStatus: 422,
    stored: true,
    message: 'The amount exceeds what can be refunded.',
  },
  RATE_LIMITED: { httpStatus: 429, stored: false, message: 'Too many requests.' },
  WEBHOOK_URL_NOT_ALLOWED: {
    httpStatus: 400,
    stored: false,
    message:
      'The webhook URL points inside (a loopback, private, link-local or reserved address, an internal name, or an IPv4 address not written as four decimal parts). Use a public https URL.',
  },
  INTERNAL_SERVER_ERROR: { httpStatus: 500, stored: false, message: 'Internal server error.' },
} as const satisfies Record<string, { httpStatus: number; stored: boolean; message: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CATALOG, value);
}

/** What travels from a service to the gateway when a command does not succeed. */
export interface PublicError {
  code: ErrorCode;
  message: string;
  /** Where a field is to blame (BAD_USER_INPUT): its input path, e.g. `amount`. */
  field?: string;
  retryAfterSeconds?: number;
  paymentId?: string;
}

export function publicError(
  code: ErrorCode,
  extra: Omit<PublicError, 'code' | 'message'> & { message?: string } = {},
): PublicError {
  return { ...extra, code, message: extra.message ?? ERROR_CATALOG[code].message };
}

/** The base of every error we throw on purpose. Always chain `cause`. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: Omit<PublicError, 'code' | 'message'>;
  constructor(
    code: ErrorCode,
    opts: { message?: string; cause?: unknown; details?: AppError['details'] } = {},
  ) {
    super(opts.message ?? ERROR_CATALOG[code].message, { cause: opts.cause });
    this.name = new.target.name;
    this.code = code;
    this.details = opts.details ?? {};
  }
  toPublic(): PublicError {
    return { ...this.details, code: this.code, message: this.message };
  }
}

export class InputInvalidError extends AppError {
  constructor(field: string, message: string) {
    super('BAD_USER_INPUT', { message, details: { field } });
  }
}

export class IdempotencyKeyInvalidError extends AppError {
  constructor() {
    super('IDEMPOTENCY_KEY_INVALID', { details: { field: 'idempotencyKey' } });
  }
}

/**
 * An owner tried to advance a request whose lease it no longer holds (its fencing token is
 * stale, or the request has moved on). Never shown to a client as such: the owner stops, and
 * whoever holds the lease now finishes the work.
 */
export class LeaseLostError extends Error {
  constructor(readonly scope: string) {
    super(`lease lost for ${scope}: another owner holds the request now`);
    this.name = 'LeaseLostError';
  }
}

/**
 * A stored ciphertext names a data key this process does not hold (DATA_ENCRYPTION_KEYS lost a
 * key, or a row came from another environment). Never shown to a client as such (masked as
 * INTERNAL_SERVER_ERROR): answering anything else would be a wrong answer, not a replay.
 */
export class DataKeyUnknownError extends Error {
  constructor(
    readonly keyId: string,
    what: string,
  ) {
    super(
      `${what} needs data key "${keyId}", which is not in DATA_ENCRYPTION_KEYS: ` +
        'add that key back at the end of the list',
    );
    this.name = 'DataKeyUnknownError';
  }
}

/**
 * A stored ciphertext failed authentication: it was altered, truncated, or copied from another
 * row (its associated data names the row it belongs to). Refused, never decrypted into garbage.
 */
export class CiphertextRejectedError extends Error {
  constructor(what: string, options?: { cause?: unknown }) {
    super(`${what} failed authentication: altered, or not this row's`, options);
    this.name = 'CiphertextRejectedError';
  }
}

/**
 * The environment a process was started with is wrong (a malformed variable, a missing key).
 * Its message is one line naming the variable; the start fails with it and nothing else.
 */
export class ConfigInvalidError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ConfigInvalidError';
  }
}

/**
 * Someone asked the migrator to roll a migration back. Migrations are append-only: a `down`
 * written beside its `up` is never run until the day it is needed, and on that day it meets
 * rows its author never saw (a dropped column loses data that later writes depended on). A
 * rollback is a new forward migration, reviewed and tested like any other.
 */
export class MigrationDownRefusedError extends Error {
  constructor(readonly migration: string) {
    super(
      `migration ${migration} cannot be rolled back: migrations are append-only, ` +
        'so write the rollback as a new forward migration (the next number in migrations/)',
    );
    this.name = 'MigrationDownRefusedError';
  }
}
