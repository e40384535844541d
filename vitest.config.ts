import { defineConfig } from 'vitest/config';

// Each test file gets its own database cloned from a migrated template (test/support/test-database.ts),
// so files run in parallel without seeing each other's rows.
export default defineConfig({
  resolve: {
    // graphql 16 has no "exports": Node (and so Apollo Server, and the built gateway) loads its
    // CommonJS build, while Vite would give our sources its "module" build. Two copies break
    // every `instanceof GraphQLError` between them, and the tests would run a gateway that
    // wraps and formats errors as production never does.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
    // Unit tests of one module with rules worth a table live beside it (services/**/*.test.ts, lib/**/*.test.ts).
    include: [
      'test/**/*.test.ts',
      'services/**/*.test.ts',
      'lib/**/*.test.ts',
      'app/**/*.test.ts',
      'gateway/**/*.test.ts',
    ],
    exclude: ['test/chaos/**'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
