/**
 * An error a client can see: a stable SCREAMING_SNAKE code, its HTTP status, and whether it is
 * stored for the idempotency key (and so replayed). Branch on codes, never on message text.
 */
export interface ErrorSpec {
  readonly code: string;
  readonly httpStatus: number;
  readonly stored: boolean;
  readonly message: string;
}

/**
 * A part of the one error catalog. lib/, each service and the gateway define the codes
 * they answer beside their code (*.errors.ts); the process composes the parts into the catalog
 * the gateway maps (app/error-catalog.ts), which refuses a code defined twice.
 */
export function defineErrors<const T extends Record<string, Omit<ErrorSpec, 'code'>>>(
  specs: T,
): { readonly [C in keyof T & string]: T[C] & { readonly code: C } } {
  return Object.fromEntries(
    Object.entries(specs).map(([code, spec]) => [code, { code, ...spec }]),
  ) as { readonly [C in keyof T & string]: T[C] & { readonly code: C } };
}

/** Codes and their specs: a part (one owner's) or the composed whole. */
export type ErrorCatalog = Readonly<Record<string, ErrorSpec>>;

/**
 * The parts as one catalog. A code defined by two parts would answer with whichever came last,
 * and a client branching on it could not tell which it got: refused, at start.
 */
export function composeErrorCatalog(...parts: ErrorCatalog[]): ErrorCatalog {
  const catalog: Record<string, ErrorSpec> = {};
  for (const part of parts) {
    for (const [code, spec] of Object.entries(part)) {
      if (Object.hasOwn(catalog, code)) throw new Error(`error code ${code} is defined twice`);
      catalog[code] = spec;
    }
  }
  return Object.freeze(catalog);
}

/** The codes any service may answer: bad input, the idempotency contract, the masked failure. */
export const LIB_ERRORS = defineErrors({
  BAD_USER_INPUT: { httpStatus: 400, stored: false, message: 'The input is not valid.' },
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
  INTERNAL_SERVER_ERROR: { httpStatus: 500, stored: false, message: 'Internal server error.' },
  DATABASE_UNAVAILABLE: {
    httpStatus: 503,
    stored: false,
    message:
      'The database is unavailable for a moment (a failover, a lost connection). Retry with the same key.',
  },
  TENANT_READS_BUSY: {
    httpStatus: 429,
    stored: false,
    message:
      "Too many of this tenant's reads are waiting for the database. Retry in a moment, or send fewer at once.",
  },
  SERVICE_UNAVAILABLE: {
    httpStatus: 503,
    stored: false,
    message:
      'An internal service did not answer (a restart, a lost connection). Retry with the same key.',
  },
});

/**
 * What travels from a service to the gateway when a command does not succeed. Beside the
 * fields every error may have, a service adds its own (payments: `paymentId`); the gateway
 * passes each on as an `extensions` entry. lib names none of them.
 */
export interface PublicError {
  code: string;
  message: string;
  /** Where a field is to blame (BAD_USER_INPUT): its input path, e.g. `amount`. */
  field?: string;
  retryAfterSeconds?: number;
  /** A service's own fields: an id the client should read next, say. */
  readonly [extension: string]: string | number | undefined;
}

export function publicError(
  spec: ErrorSpec,
  extra: Omit<PublicError, 'code' | 'message'> & { message?: string } = {},
): PublicError {
  return { ...extra, code: spec.code, message: extra.message ?? spec.message };
}

/** The base of every error we throw on purpose. Always chain `cause`. */
export class AppError extends Error {
  readonly code: string;
  readonly details: Omit<PublicError, 'code' | 'message'>;
  constructor(
    spec: ErrorSpec,
    opts: { message?: string; cause?: unknown; details?: AppError['details'] } = {},
  ) {
    super(opts.message ?? spec.message, { cause: opts.cause });
    this.name = new.target.name;
    this.code = spec.code;
    this.details = opts.details ?? {};
  }
  toPublic(): PublicError {
    return { ...this.details, code: this.code, message: this.message };
  }
}

export class InputInvalidError extends AppError {
  constructor(field: string, message: string) {
    super(LIB_ERRORS.BAD_USER_INPUT, { message, details: { field } });
  }
}

export class IdempotencyKeyInvalidError extends AppError {
  constructor() {
    super(LIB_ERRORS.IDEMPOTENCY_KEY_INVALID, { details: { field: 'idempotencyKey' } });
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
