import { readFileSync } from 'node:fs';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
} from '@apollo/server/plugin/disabled';
import { Kind, type DocumentNode } from 'graphql';
import type { Metrics } from '../../services/kernel/metrics.ts';
import type { GatewayContext } from './context.ts';
import { formatError } from './errors.ts';
import { documentLimitRules } from './limits.ts';
import { resolvers } from './resolvers.ts';

const typeDefs = readFileSync(new URL('../../schema/payments.graphql', import.meta.url), 'utf8');

/**
 * Marks answers served from a stored result: `extensions.idempotency.replayed` in the body and
 * an `Idempotent-Replayed` header, so a client (or a person with curl) can tell a replay.
 */
const replayMarkerPlugin: ApolloServerPlugin<GatewayContext> = {
  requestDidStart: () =>
    Promise.resolve({
      willSendResponse: ({ response, contextValue }) => {
        if (!contextValue.replayed || response.body.kind !== 'single') return Promise.resolve();
        response.body.singleResult.extensions = {
          ...response.body.singleResult.extensions,
          idempotency: { replayed: true },
        };
        response.http.headers.set('idempotent-replayed', 'true');
        return Promise.resolve();
      },
    }),
};

/** The label of graphql_request_duration_seconds: the root field, which the schema bounds. */
function rootFieldLabel(document: DocumentNode | undefined): string {
  const operation = document?.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION);
  if (operation?.kind !== Kind.OPERATION_DEFINITION) return 'invalid';
  const fields = operation.selectionSet.selections.filter((s) => s.kind === Kind.FIELD);
  if (fields.length !== 1) return fields.length === 0 ? 'invalid' : 'multiple';
  return fields[0]?.kind === Kind.FIELD ? fields[0].name.value : 'invalid';
}

function durationPlugin(metrics: Metrics): ApolloServerPlugin<GatewayContext> {
  return {
    requestDidStart: () => {
      const started = process.hrtime.bigint();
      return Promise.resolve({
        willSendResponse: ({ document }) => {
          const seconds = Number(process.hrtime.bigint() - started) / 1e9;
          metrics.graphqlDuration.observe(
            { service: 'gateway', operation: rootFieldLabel(document) },
            seconds,
          );
          return Promise.resolve();
        },
      });
    },
  };
}

export async function createApollo(metrics: Metrics): Promise<ApolloServer<GatewayContext>> {
  const apollo = new ApolloServer<GatewayContext>({
    typeDefs,
    resolvers,
    validationRules: documentLimitRules,
    formatError,
    includeStacktraceInErrorResponses: false,
    // The process owns SIGTERM (drain, then stop Apollo, then exit). Apollo's own handler,
    // on by default outside NODE_ENV=test, races ours and leaves apollo.stop() hanging.
    stopOnTerminationSignals: false,
    plugins: [
      replayMarkerPlugin,
      durationPlugin(metrics),
      // Apollo installs these unless told not to. Cache control hooks every field's resolver
      // (willResolveField) to compute HTTP cache hints that a payments API never sends: its
      // answers are mutations and tenant-scoped reads. With no plugin hooking fields, Apollo
      // runs resolvers unwrapped. Inline tracing is for federated subgraphs, which this is not.
      ApolloServerPluginCacheControlDisabled(),
      ApolloServerPluginInlineTraceDisabled(),
    ],
  });
  await apollo.start();
  return apollo;
}
