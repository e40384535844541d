/**
 * Baseline 3, the reference behind Apollo: the hand-written reference's logic and SQL
 * (reference-server.ts) served by Apollo Server 5 through executeHTTPGraphQLRequest, with the
 * product's schema and wire format and the product's Apollo settings (cache-control and inline
 * traces off, no stack traces). What separates it from the product is the product's own
 * machinery; what separates it from the reference is GraphQL and Apollo.
 *
 *   DATABASE_URL=… PSP_URL=… BASELINE_TENANT_ID=… node scripts/bench/apollo-reference-server.js
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloServer, HeaderMap } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
} from '@apollo/server/plugin/disabled';
import { GraphQLError } from 'graphql';
import pg from 'pg';
import { referenceCreatePayment } from './reference-server.ts';

/** The gateway's DEFAULT_POOL_MAX, as the other baselines have. */
const POOL_MAX = 20;
const MAX_BODY_BYTES = 100 * 1024;

interface CreatePaymentInput {
  idempotencyKey: string;
  amount: string;
  currency: string;
  paymentMethod: string;
  reference?: string | null;
}

const databaseUrl = process.env['DATABASE_URL'];
const tenantId = process.env['BASELINE_TENANT_ID'];
if (!databaseUrl || !process.env['PSP_URL'] || !tenantId)
  throw new Error('DATABASE_URL, PSP_URL and BASELINE_TENANT_ID required');
const pool = new pg.Pool({ connectionString: databaseUrl, max: POOL_MAX });
pool.on('error', () => undefined);

const typeDefs = readFileSync(new URL('../../schema/payments.graphql', import.meta.url), 'utf8');
const apollo = new ApolloServer({
  typeDefs,
  resolvers: {
    Mutation: {
      createPayment: async (_: unknown, { input }: { input: CreatePaymentInput }) => {
        const answer = await referenceCreatePayment(pool, {
          tenantId,
          idempotencyKey: input.idempotencyKey,
          amount: input.amount,
          currency: input.currency,
          paymentMethod: input.paymentMethod,
          reference: input.reference ?? '',
        });
        if (answer.status !== 200) {
          const { error } = JSON.parse(answer.body) as { error: string };
          const headers = new HeaderMap(Object.entries(answer.headers ?? {}));
          throw new GraphQLError(error, {
            extensions: { code: error, http: { status: answer.status, headers } },
          });
        }
        const { payment } = JSON.parse(answer.body) as { payment: unknown };
        return {
          payment,
          idempotency: { replayed: answer.headers?.['idempotent-replayed'] === 'true' },
        };
      },
    },
  },
  includeStacktraceInErrorResponses: false,
  stopOnTerminationSignals: false,
  plugins: [ApolloServerPluginCacheControlDisabled(), ApolloServerPluginInlineTraceDisabled()],
});
await apollo.start();

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new Error('body too large');
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

const server = createServer((req, res) => {
  void (async () => {
    const headers = new HeaderMap();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string') headers.set(name, value);
    }
    const response = await apollo.executeHTTPGraphQLRequest({
      httpGraphQLRequest: {
        method: req.method ?? 'POST',
        headers,
        search: '',
        body: await readJson(req),
      },
      context: () => Promise.resolve({}),
    });
    for (const [name, value] of response.headers) res.setHeader(name, value);
    res.statusCode = response.status ?? 200;
    if (response.body.kind === 'complete') res.end(response.body.string);
    else {
      for await (const chunk of response.body.asyncIterator) res.write(chunk);
      res.end();
    }
  })().catch((error: unknown) => {
    console.error('[apollo-reference]', error);
    if (!res.headersSent) res.writeHead(500).end();
    else res.destroy();
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
console.log(
  `apollo-reference listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`,
);
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(
    () =>
      void apollo
        .stop()
        .then(() => pool.end())
        .then(() => process.exit(0)),
  );
});
