import { readFileSync } from 'node:fs';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
} from '@apollo/server/plugin/disabled';
import type { GraphQLSchema } from 'graphql';
import type { ErrorCatalog } from '../../lib/errors.ts';
import type { GatewayMetrics } from '../http/gateway.metrics.ts';
import type { GatewayContext } from './context.ts';
import { errorFormatter, nameScalarRefusal } from './errors.ts';
import { documentLimitRules, MAX_DOCUMENT_TOKENS } from './limits.ts';
import { createResolvers } from './resolvers.ts';
import { executedRootFields, fragmentsOf, type ResolvedOperation } from './root-fields.ts';

const typeDefs = readFileSync(new URL('../../schema/payments.graphql', import.meta.url), 'utf8');

/** The label of a request refused before Apollo resolved its operation, or of no root field. */
const UNRESOLVED_OPERATION = 'invalid';

/**
 * The `operation` label of graphql_request_duration_seconds: the one root field the operation
 * executes (found through fragments), `multiple`, or `invalid`. It is read from the operation
 * Apollo resolved, that is after parsing and validation, so a client's document can only ever
 * name a root field the schema has: a label taken from an unvalidated document would let any
 * client mint a new series per request, and the registry (and heap) would grow without bound.
 */
export function operationLabel(schema: GraphQLSchema, resolved: ResolvedOperation): string {
  const names = [...executedRootFields(resolved).values()];
  if (names.length > 1) return 'multiple';
  const only = names[0];
  const root = schema.getRootType(resolved.operation.operation);
  return only === undefined || root?.getFields()[only] === undefined ? UNRESOLVED_OPERATION : only;
}

/**
 * The gateway's one plugin, one set of hooks per request:
 * - marks answers served from a stored result: `extensions.idempotency.replayed` in the body and
 *   an `Idempotent-Replayed` header, so a client (or a person with curl) can tell a replay;
 * - observes graphql_request_duration_seconds, labelled by operationLabel;
 * - names the argument a scalar refused (nameScalarRefusal).
 */
function gatewayPlugin(metrics: GatewayMetrics): ApolloServerPlugin<GatewayContext> {
  return {
    requestDidStart: () => {
      const started = process.hrtime.bigint();
      let label = UNRESOLVED_OPERATION;
      return Promise.resolve({
        didResolveOperation: ({ schema, operation, document, request }) => {
          if (operation === undefined) return Promise.resolve();
          label = operationLabel(schema, {
            operation,
            fragments: fragmentsOf(document),
            variables: request.variables,
          });
          return Promise.resolve();
        },
        didEncounterErrors: ({ errors, document }) => {
          for (const error of errors) nameScalarRefusal(error, document);
          return Promise.resolve();
        },
        willSendResponse: ({ response, contextValue }) => {
          if (contextValue.replayed && response.body.kind === 'single') {
            response.body.singleResult.extensions = {
              ...response.body.singleResult.extensions,
              idempotency: { replayed: true },
            };
            response.http.headers.set('idempotent-replayed', 'true');
          }
          const seconds = Number(process.hrtime.bigint() - started) / 1e9;
          metrics.graphqlDuration.observe({ service: 'gateway', operation: label }, seconds);
          return Promise.resolve();
        },
      });
    },
  };
}

export async function createApollo(
  metrics: GatewayMetrics,
  errors: ErrorCatalog,
): Promise<ApolloServer<GatewayContext>> {
  const apollo = new ApolloServer<GatewayContext>({
    typeDefs,
    resolvers: createResolvers(errors),
    validationRules: documentLimitRules,
    // The token limit stops the parser itself, so a huge or deeply nested document is refused
    // (GRAPHQL_PARSE_FAILED) before any AST exists to walk, and never overflows the stack.
    parseOptions: { maxTokens: MAX_DOCUMENT_TOKENS },
    // Explicit rather than Apollo's NODE_ENV default, so a test process (NODE_ENV=test) serves
    // the same schema surface as production. The schema is public: schema/payments.graphql.
    introspection: true,
    formatError: errorFormatter(errors),
    includeStacktraceInErrorResponses: false,
    // The process owns SIGTERM (drain, then stop Apollo, then exit). Apollo's own handler,
    // on by default outside NODE_ENV=test, races ours and leaves apollo.stop() hanging.
    stopOnTerminationSignals: false,
    // Off: it guards cookie-authenticated APIs against forms and scripts of other sites, which
    // a browser sends with the victim's cookies. This API authenticates by bearer token only and
    // sets no cookie; a browser never adds an Authorization header on its own, so a forged
    // cross-site request arrives unauthenticated and is refused before GraphQL runs
    // (test/integration/cross-site-requests.test.ts). A cookie-based login would need it back.
    csrfPrevention: false,
    plugins: [
      gatewayPlugin(metrics),
      // Apollo installs these unless told not to. Cache control hooks every field's resolver
      // (willResolveField) to compute HTTP cache hints that a payments API never sends: its
      // answers are mutations and tenant-scoped reads. With no plugin hooking fields, Apollo
      // runs resolvers unwrapped. Inline tracing is for federated subgraphs, which this is not.
      ApolloServerPluginCacheControlDisabled(),
      ApolloServerPluginInlineTraceDisabled(),
      // Apollo's landing page follows NODE_ENV: outside production a Sandbox loaded from Apollo's
      // servers, in production a page of its own. A browser's page is the explorer's (EXPLORER);
      // with the explorer off it gets none, whatever NODE_ENV says (app/node-env-default.ts).
      ApolloServerPluginLandingPageDisabled(),
    ],
  });
  await apollo.start();
  return apollo;
}
