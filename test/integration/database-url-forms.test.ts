import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateDatabase } from '../../migrations/migrate.ts';
import { useTestDatabase } from '../support/test-database.ts';
import { paymentOf } from '../support/graphql-client.ts';
import {
  createPaymentOn,
  paymentInput,
  startTestStack,
  type TestStack,
} from '../support/test-stack.ts';

/** Debian's PostgreSQL listens here too; the test runs where the test server is the local one. */
const SOCKET_DIR = '/var/run/postgresql';
const database = useTestDatabase('database_url_forms');
let stack: TestStack | undefined;

afterAll(async () => {
  await stack?.stop();
});

/** The test database, addressed through the unix socket instead of TCP. */
function socketUrl(): string {
  const tcp = new URL(database.url);
  return `postgresql://${tcp.username}@/${tcp.pathname.slice(1)}?host=${SOCKET_DIR}`;
}

describe('DATABASE_URL as a unix socket (postgresql://user@/db?host=/dir)', () => {
  it('migrates through MikroORM and serves a payment', async (context) => {
    // Only where the tests' server is this machine's own: a TEST_DATABASE_URL elsewhere, or the
    // embedded fallback, has no socket here.
    const local =
      new URL(database.url).hostname === '127.0.0.1' && existsSync(`${SOCKET_DIR}/.s.PGSQL.5432`);
    if (!local) context.skip();
    await migrateDatabase(socketUrl());
    stack = await startTestStack({ databaseUrl: socketUrl() });
    expect(paymentOf(await createPaymentOn(stack, paymentInput('socket-1'))).status).toBe(
      'SUCCEEDED',
    );
  });
});
