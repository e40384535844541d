/**
 * `npm run bench:graphql-execution`: what executing the bench's createPayment document costs in
 * the gateway's schema, with the service call stubbed out (no network, no database): graphql-js's
 * execute, as Apollo runs it, against graphql-jit's compiled query, the ceiling of the
 * graphql-jit lever (docs/decisions/0025). graphql-jit is not a dependency: install it first with
 * `npm i --no-save graphql-jit@0.8.9`. Both run in one process, in alternating rounds; nothing is
 * asserted.
 */
import { readFileSync } from 'node:fs';
import {
  buildSchema,
  execute,
  GraphQLObjectType,
  GraphQLScalarType,
  parse,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLFieldResolver,
  type GraphQLSchema,
} from 'graphql';
import { ERROR_CATALOG } from '../app/error-catalog.ts';
import { createResolvers } from '../gateway/graphql/resolvers.ts';

const ROUNDS = 4;
const CALLS = 50_000;
const MUTATION = `mutation($i: CreatePaymentInput!) { createPayment(input: $i) { payment { id status } idempotency { replayed } } }`;
const VARIABLES = {
  i: {
    idempotencyKey: 'bench-1',
    amount: '10.00',
    currency: 'EUR',
    paymentMethod: 'pm_card_visa',
    reference: 'bench-1',
  },
};
const PAYMENT = {
  id: '11111111-2222-4333-8444-555555555555',
  status: 'SUCCEEDED',
  amount: '10.00',
  currency: 'EUR',
  amountCaptured: '10.00',
  amountRefunded: '0.00',
  paymentMethod: 'pm_card_visa',
  captureMethod: 'AUTOMATIC',
  reference: 'bench-1',
  providerReference: 'ch_1',
  failureCode: null,
  createdAt: new Date().toISOString(),
  refunds: [],
};

const typeDefs = readFileSync(new URL('../schema/payments.graphql', import.meta.url), 'utf8');
/** The schema with the gateway's resolvers and scalars, as Apollo builds it from the same two. */
function executableSchema() {
  const schema = buildSchema(typeDefs);
  for (const [typeName, resolvers] of Object.entries(createResolvers(ERROR_CATALOG))) {
    const type = schema.getType(typeName);
    if (type instanceof GraphQLScalarType && resolvers instanceof GraphQLScalarType) {
      Object.assign(type, {
        serialize: resolvers.serialize,
        parseValue: resolvers.parseValue,
        parseLiteral: resolvers.parseLiteral,
      });
    } else if (type instanceof GraphQLObjectType) {
      const fields = type.getFields();
      for (const [name, resolve] of Object.entries(resolvers as Record<string, unknown>))
        fields[name]!.resolve = resolve as GraphQLFieldResolver<unknown, unknown>;
    }
  }
  return schema;
}
const schema = executableSchema();
const context = {
  tenantId: PAYMENT.id,
  replayed: false,
  reportError: () => undefined,
  services: {
    payments: {
      create: () =>
        Promise.resolve({ ok: true, idempotency: { replayed: true }, payment: PAYMENT }),
    },
  },
};

/** The part of graphql-jit's API this uses; it is not a dependency, so it has no types here. */
interface GraphqlJit {
  compileQuery(
    schema: GraphQLSchema,
    document: DocumentNode,
  ): { query(root: unknown, context: unknown, variables: unknown): unknown } | ExecutionResult;
}

async function loadGraphqlJit(): Promise<GraphqlJit | null> {
  const name = 'graphql-jit'; // a variable, so that TypeScript does not look for the package
  try {
    return (await import(name)) as GraphqlJit;
  } catch {
    return null;
  }
}

type Run = () => Promise<ExecutionResult> | ExecutionResult;

async function microseconds(run: Run): Promise<number> {
  const started = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) {
    const result = await run();
    if (result.errors !== undefined) throw new Error(JSON.stringify(result.errors));
  }
  const used = process.cpuUsage(started);
  return (used.user + used.system) / CALLS;
}

async function main(): Promise<void> {
  const jit = await loadGraphqlJit();
  if (jit === null) {
    console.log('graphql-jit is not installed: npm i --no-save graphql-jit@0.8.9');
    return;
  }
  const document: DocumentNode = parse(MUTATION);
  const compiled = jit.compileQuery(schema, document);
  if (!('query' in compiled)) throw new Error(JSON.stringify(compiled));
  const js: Run = () =>
    execute({
      schema,
      document,
      contextValue: context,
      variableValues: VARIABLES,
    });
  const compiledRun: Run = () =>
    compiled.query(undefined, context, VARIABLES) as Promise<ExecutionResult>;
  let last = { js: NaN, jit: NaN };
  for (let round = 0; round < ROUNDS; round++) {
    last = { js: await microseconds(js), jit: await microseconds(compiledRun) };
    console.log(
      `round ${round + 1}: graphql-js execute ${last.js.toFixed(2)} µs, graphql-jit ${last.jit.toFixed(2)} µs`,
    );
  }
  console.log(`graphql-jit ÷ graphql-js: ${(last.jit / last.js).toFixed(2)}`);
}

await main();
