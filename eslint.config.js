// Type-checked lint. The import restrictions hold the architecture's one-way dependencies:
// app/ → gateway/ → services/ → lib/; lib/ depends on nothing of ours
// (dependency-cruiser, `npm run lint:boundaries`, checks the rest of the layering).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const noGatewayImports = {
  group: ['**/gateway/*', '**/gateway/**', '**/app/*', '**/app/**'],
  message: 'services/ and lib/ must not depend on the gateway or the app.',
};

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      '.data/',
      'dist/',
      'packages/*/dist/',
      'packages/*/dist.*/',
      '.build-*/',
      'dist.*/',
      'coverage/',
      'grafana/**/*.json',
      '.dependency-cruiser.cjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'max-params': ['error', 3],
    },
  },
  {
    // GraphQL Code Generator's output (`npm run codegen`): a nullable JSON field is typed
    // `unknown | null` there, which says what the schema says, and is not ours to restyle.
    files: ['packages/client/src/generated/**'],
    rules: { '@typescript-eslint/no-redundant-type-constituents': 'off' },
  },
  {
    // GraphQL fixes a resolver's signature at four parameters (parent, args, context, info).
    files: ['gateway/graphql/resolvers.ts'],
    rules: { 'max-params': 'off' },
  },
  {
    files: ['services/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [noGatewayImports] }] },
  },
  {
    files: ['lib/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            noGatewayImports,
            {
              group: ['**/services/**'],
              message: 'lib/ depends on nothing of ours.',
            },
          ],
        },
      ],
    },
  },
  { files: ['eslint.config.js'], ...tseslint.configs.disableTypeChecked },
);
