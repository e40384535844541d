import {
  GraphQLError,
  Kind,
  responsePathAsArray,
  visit,
  type ArgumentNode,
  type ASTNode,
  type DocumentNode,
  type GraphQLFormattedError,
  type GraphQLResolveInfo,
  type ObjectFieldNode,
  type ValueNode,
} from 'graphql';
import { HeaderMap } from '@apollo/server';
import { TRPCClientError } from '@trpc/client';
import { TRPCError, type AnyTRPCRouter } from '@trpc/server';
import { databaseUnavailable } from '../../lib/db/database-unavailable.ts';
import {
  AppError,
  LIB_ERRORS,
  publicError,
  type ErrorCatalog,
  type PublicError,
} from '../../lib/errors.ts';
import { executedRootFields } from './root-fields.ts';

/**
 * A service's public error as a GraphQL error. When the failing field is the only root field
 * the operation executes, the catalog's HTTP status (and Retry-After) apply to the whole
 * response; with several root fields the response stays 200 with per-field errors (docs/api.md
 * §3.1), however the document groups them: fields inside fragments count as the fields they are.
 */
export function toGraphQLError(
  error: PublicError,
  info: GraphQLResolveInfo,
  catalog: ErrorCatalog,
): GraphQLError {
  const soleRootField =
    executedRootFields({
      operation: info.operation,
      fragments: info.fragments,
      variables: info.variableValues,
    }).size === 1;
  const headers = new HeaderMap();
  if (error.retryAfterSeconds !== undefined)
    headers.set('retry-after', String(Math.ceil(error.retryAfterSeconds)));
  const { code, message: _message, field, retryAfterSeconds, ...own } = error;
  const extensions: Record<string, unknown> = { code };
  if (field !== undefined) extensions['field'] = field;
  if (retryAfterSeconds !== undefined)
    extensions['retryAfterSeconds'] = Math.ceil(retryAfterSeconds);
  // Each service's own fields (payments' paymentId), as the service named them.
  for (const [name, value] of Object.entries(own))
    if (value !== undefined) extensions[name] = value;
  // A code missing from the catalog is a bug; errorFormatter masks it, and 500 goes with that.
  const status = catalog[error.code]?.httpStatus ?? LIB_ERRORS.INTERNAL_SERVER_ERROR.httpStatus;
  if (soleRootField) extensions['http'] = { status, headers };
  // Located here, at the field that failed, as graphql-js would locate it. An error without a
  // path is wrapped by graphql-js in a new one that copies its stack, and formatting a stack
  // trace was the largest single cost of answering a duplicate in flight with 409.
  return new GraphQLError(error.message, {
    nodes: info.fieldNodes,
    path: responsePathAsArray(info.path),
    extensions,
  });
}

/**
 * A typed error from a service call, or null if it carries none. tRPC's server-side caller
 * throws every failure as a TRPCError with what the procedure threw as its cause: a deliberate
 * AppError keeps its catalog code, input the procedure's validator refused is BAD_USER_INPUT,
 * and anything else is for the caller to mask.
 */
export function publicErrorOf(error: unknown): PublicError | null {
  if (error instanceof TRPCClientError)
    return publicErrorOverHttp(error as TRPCClientError<AnyTRPCRouter>);
  if (!(error instanceof TRPCError)) return null;
  if (error.cause instanceof AppError) return error.cause.toPublic();
  if (error.code === 'BAD_REQUEST') {
    return publicError(LIB_ERRORS.BAD_USER_INPUT);
  }
  return databaseUnavailable(error.cause);
}

/**
 * The same from a service in another process (SERVICE_URLS): its error formatter
 * (services/trpc.ts) sent the catalog error as `data.publicError`, and a refused input as
 * BAD_REQUEST. An answer without tRPC's shape (a refused internal token) carries neither.
 */
function publicErrorOverHttp(error: TRPCClientError<AnyTRPCRouter>): PublicError | null {
  const data = error.data as { code?: string; publicError?: PublicError | null } | undefined;
  if (data?.publicError) return data.publicError;
  if (data?.code === 'BAD_REQUEST') return publicError(LIB_ERRORS.BAD_USER_INPUT);
  return null;
}

/**
 * A scalar refuses a value before any resolver runs, where graphql-js files it as a document
 * error (a literal: GRAPHQL_VALIDATION_FAILED) or a variable error, and neither names the
 * argument. When the refusal is an AppError (DateTime's), the error keeps the AppError's code,
 * so a literal and a variable are refused alike, and `field` names the argument or input field
 * the value, or its variable, was given for, as a service's refusal would.
 */
export function nameScalarRefusal(error: GraphQLError, document: DocumentNode | undefined): void {
  let cause: unknown = error.originalError;
  while (cause instanceof GraphQLError) cause = cause.originalError;
  if (!(cause instanceof AppError)) return;
  error.extensions['code'] = cause.code;
  const refused = error.nodes?.[0];
  const field = document && refused ? fieldGiven(document, refused) : undefined;
  if (field !== undefined) error.extensions['field'] = field;
}

/** The argument or input-object field that `refused` (a value, or a variable's definition) fills. */
function fieldGiven(document: DocumentNode, refused: ASTNode): string | undefined {
  const fills = (value: ValueNode): boolean =>
    value === refused ||
    (refused.kind === Kind.VARIABLE_DEFINITION &&
      value.kind === Kind.VARIABLE &&
      value.name.value === refused.variable.name.value) ||
    (value.kind === Kind.LIST && value.values.some(fills));
  let field: string | undefined;
  const visitor = (node: ArgumentNode | ObjectFieldNode) => {
    if (field === undefined && fills(node.value)) field = node.name.value;
  };
  visit(document, { Argument: visitor, ObjectField: visitor });
  return field;
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
export function errorFormatter(
  catalog: ErrorCatalog,
): (formatted: GraphQLFormattedError) => GraphQLFormattedError {
  const masked = LIB_ERRORS.INTERNAL_SERVER_ERROR;
  return (formatted) => {
    const code = formatted.extensions?.['code'];
    if (
      typeof code === 'string' &&
      (Object.hasOwn(catalog, code) || APOLLO_CODES.has(code)) &&
      code !== masked.code
    ) {
      const { stacktrace: _stacktrace, ...extensions } = formatted.extensions ?? {};
      return { ...formatted, extensions };
    }
    return {
      message: masked.message,
      ...(formatted.path ? { path: formatted.path } : {}),
      extensions: { code: masked.code },
    };
  };
}
