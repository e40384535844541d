import { defineConfig } from 'vitest/config';

// Each test file gets its own database cloned from a migrated template (test/support/test-database.ts),
// so files run in parallel without seeing each other's rows.
export default defineConfig({
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
