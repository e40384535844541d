/**
 * `npm run codegen` (from the repository's root: paths are relative to it): the SDK's types and
 * typed documents, from the public schema and src/operations.graphql, into src/generated/.
 * test/sdk/codegen-fresh.test.ts fails when the committed output differs from a fresh run.
 *
 * The typed documents use graphql's own TypedQueryDocumentNode, not
 * @graphql-typed-document-node/core: the package then depends on graphql alone.
 */
import type { CodegenConfig } from '@graphql-codegen/cli';

export const SCHEMA = 'schema/payments.graphql';
export const DOCUMENTS = 'packages/client/src/operations.graphql';
export const OUTPUT = 'packages/client/src/generated/graphql.ts';

/** What one run generates: the schema's types, the operations' types and their documents. */
export const OUTPUT_CONFIG: CodegenConfig['generates'][string] = {
  plugins: ['typescript', 'typescript-operations', 'typed-document-node'],
  config: {
    // The house compiles with verbatimModuleSyntax: type-only imports must say so.
    useTypeImports: true,
    documentNodeImport: 'graphql#TypedQueryDocumentNode',
    // String unions, not TS enums: no runtime objects, and callers write 'MANUAL'.
    enumsAsTypes: true,
    skipTypename: true,
    // Nullable result fields are present (null), optional variables may be left out.
    avoidOptionals: { field: true, inputValue: false },
    strictScalars: true,
    scalars: {
      Money: 'string',
      CurrencyCode: 'string',
      IdempotencyKey: 'string',
      DateTime: 'string',
      JSON: 'unknown',
    },
  },
};

const config: CodegenConfig = {
  schema: SCHEMA,
  documents: DOCUMENTS,
  generates: { [OUTPUT]: OUTPUT_CONFIG },
  silent: true,
};

export default config;
