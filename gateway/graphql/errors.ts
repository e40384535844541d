import { GraphQLError, type GraphQLFormattedError, type GraphQLResolveInfo } from 'graphql';
import { HeaderMap } from '@apollo/server';
import { TRPCError } from '@trpc/server';
import {
  AppError,
  ERROR_CATALOG,
  isErrorCode,
  type PublicError,
} from '../../services/kernel/errors.ts';

/**
 * A service's public error as a GraphQL error. When the failing field is the operation's only
 * root field, the catalog's HTTP status (and Retry-After) apply to the whole response; with
 * several root fields the response stays 200 with per-field errors.
 */
export function toGraphQLError(error: PublicError, info: GraphQLResolveInfo): GraphQLError {
  const soleRootField = info.operation.selectionSet.selections.length === 1;
  const headers = new HeaderMap();
  if (error.retryAfterSeconds !== undefined)
    headers.set('retry-after', String(Math.ceil(error.retryAfterSeconds)));
  const extensions: Record<string, unknown> = { code: error.code };
  if (error.field !== undefined) extensions['field'] = error.field;
  if (error.retryAfterSeconds !== undefined)
    extensions['retryAfterSeconds'] = Math.ceil(error.retryAfterSeconds);
  if (error.paymentId !== undefined) extensions['paymentId'] = error.paymentId;
  if (soleRootField) extensions['http'] = { status: ERROR_CATALOG[error.code].httpStatus, headers };
  return new GraphQLError(error.message, { extensions });
}

/**
 * A typed error from a service call, or null if it carries none. tRPC's server-side caller
 * throws every failure as a TRPCError with what the procedure threw as its cause: a deliberate
 * AppError keeps its catalog code, input the procedure's validator refused is BAD_USER_INPUT,
 * and anything else is for the caller to mask.
 */
export function publicErrorOf(error: unknown): PublicError | null {
  if (!(error instanceof TRPCError)) return null;
  if (error.cause instanceof AppError) return error.cause.toPublic();
  if (error.code === 'BAD_REQUEST') {
    return { code: 'BAD_USER_INPUT', message: ERROR_CATALOG.BAD_USER_INPUT.message };
  }
  return null;
}

/** Codes that Apollo itself assigns before execution; they pass through unmasked. */
const APOLLO_CODES = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'BAD_REQUEST',
  'OPERATION_RESOLUTION_FAILURE',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
]);

/**
 * The one place errors are masked. Our catalog codes and Apollo's own request errors pass;
 * anything else (a bug, a database failure, a thrown string) becomes INTERNAL_SERVER_ERROR with
 * no detail. It never throws: a formatter that throws would leak Apollo's default.
 */
export function formatError(formatted: GraphQLFormattedError): GraphQLFormattedError {
  const code = formatted.extensions?.['code'];
  if (
    typeof code === 'string' &&
    (isErrorCode(code) || APOLLO_CODES.has(code)) &&
    code !== 'INTERNAL_SERVER_ERROR'
  ) {
    const { stacktrace: _stacktrace, ...extensions } = formatted.extensions ?? {};
    return { ...formatted, extensions };
  }
  return {
    message: ERROR_CATALOG.INTERNAL_SERVER_ERROR.message,
    ...(formatted.path ? { path: formatted.path } : {}),
    extensions: { code: 'INTERNAL_SERVER_ERROR' },
  };
}
