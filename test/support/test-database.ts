import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, beforeEach, inject } from 'vitest';
import type { RunnerTask } from 'vitest';
import {
  sqlState,
  urlWithDatabase,
  withClient,
} from '../../dev/embedded-postgres/database-server.ts';
import { ensureTestPartitions } from './test-partitions.ts';

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** "source database is being accessed by other users": someone is connected to the template. */
const SQLSTATE_OBJECT_IN_USE = '55006';
/**
 * CREATE DATABASE waits up to 5 s (server-side, fixed) for sessions on the template to leave,
 * then fails with 55006. Concurrent clones do not count as sessions and nothing in this harness
 * connects to the template, but a human's psql or a database browser may. Retrying rides out a
 * session a little longer than 5 s; one left open fails after ~15 s, naming the template.
 */
const CLONE_ATTEMPTS = 3;
/** Short: most of each attempt's wait already happened inside the server. */
const CLONE_RETRY_DELAY_MS = 100;
/** Keeps `pgw_t_<label>_<8 hex>` within PostgreSQL's 63-byte identifier limit (else truncated). */
const LABEL_MAX_CHARS = 40;

function sanitiseLabel(label: string): string {
  const clean = label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, LABEL_MAX_CHARS);
  return clean === '' ? 'db' : clean;
}

async function dropTestDatabase(adminUrl: string, name: string): Promise<void> {
  await withClient(adminUrl, async (admin) => {
    const quoted = admin.escapeIdentifier(name);
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${quoted}`);
    } catch (error) {
      if (sqlState(error) !== SQLSTATE_OBJECT_IN_USE) throw error;
      // The test left connections open (an un-ended pool): cut them, but say so, since the
      // same leak in the service would exhaust max_connections.
      console.warn(`test database ${name} still had open connections at drop; forcing`);
      await admin.query(`DROP DATABASE IF EXISTS ${quoted} WITH (FORCE)`);
    }
  });
}

export interface CloneOptions {
  adminUrl: string;
  template: string;
  label: string;
}

/** CREATE DATABASE pgw_t_<label>_<random> TEMPLATE <template>, retried while the template is busy. */
export async function cloneDatabase(opts: CloneOptions): Promise<TestDatabase> {
  const name = `pgw_t_${sanitiseLabel(opts.label)}_${randomBytes(4).toString('hex')}`;
  await withClient(opts.adminUrl, async (admin) => {
    const create = `CREATE DATABASE ${admin.escapeIdentifier(name)} TEMPLATE ${admin.escapeIdentifier(opts.template)}`;
    for (let attempt = 1; ; attempt += 1) {
      try {
        await admin.query(create);
        return;
      } catch (error) {
        if (sqlState(error) !== SQLSTATE_OBJECT_IN_USE || attempt === CLONE_ATTEMPTS) throw error;
        await sleep(CLONE_RETRY_DELAY_MS * attempt);
      }
    }
  });
  const { adminUrl } = opts;
  return {
    name,
    url: urlWithDatabase(adminUrl, name),
    drop: () => dropTestDatabase(adminUrl, name),
  };
}

/** A fresh database cloned from the run's migrated template; yours alone, drop it when done. */
export async function createTestDatabase(label: string): Promise<TestDatabase> {
  const database = await cloneDatabase({
    adminUrl: inject('pgwAdminUrl'),
    template: inject('pgwTemplateDatabase'),
    label,
  });
  // The template may have been built on an earlier day: bring its partitions up to now, as a
  // gateway does when it starts.
  await ensureTestPartitions(database.url);
  return database;
}

/** A fresh database with no schema at all, for a test that migrates it itself; drop it when done. */
export async function createEmptyDatabase(label: string): Promise<TestDatabase> {
  const adminUrl = inject('pgwAdminUrl');
  const name = `pgw_t_${sanitiseLabel(label)}_${randomBytes(4).toString('hex')}`;
  await withClient(adminUrl, (admin) =>
    admin.query(`CREATE DATABASE ${admin.escapeIdentifier(name)}`),
  );
  return {
    name,
    url: urlWithDatabase(adminUrl, name),
    drop: () => dropTestDatabase(adminUrl, name),
  };
}

/**
 * createEmptyDatabase for the tests of one file, each database dropped after the test that made
 * it, whether it passed or not.
 */
export function useEmptyDatabases(): (label: string) => Promise<TestDatabase> {
  const created: TestDatabase[] = [];
  afterEach(async () => {
    await Promise.all(created.splice(0).map((database) => database.drop()));
  });
  return async (label) => {
    const database = await createEmptyDatabase(label);
    created.push(database);
    return database;
  };
}

function anyFailed(tasks: readonly RunnerTask[]): boolean {
  return tasks.some(
    (task) => task.result?.state === 'fail' || ('tasks' in task && anyFailed(task.tasks)),
  );
}

/**
 * One database for the enclosing file (or describe block), created before its tests. Dropped
 * after them only if all passed: a failure keeps it, named in the output, so the rows that
 * explain the failure can be inspected; the next run's global setup removes it.
 * Read `.url` inside hooks and tests, not at module level (it does not exist yet there).
 */
export function useTestDatabase(label: string): { readonly url: string } {
  let database: TestDatabase | undefined;
  let failed = false;
  beforeAll(async () => {
    database = await createTestDatabase(label);
  });
  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => {
      failed = true;
    });
  });
  // Vitest 4 parses the first parameter for fixture names and rejects anything but an object
  // pattern; the suite (whose results we need) is the second.
  // eslint-disable-next-line no-empty-pattern
  afterAll(async ({}, suite) => {
    if (database === undefined) return;
    if (failed || anyFailed(suite.tasks)) {
      const until =
        inject('pgwServerKind') === 'embedded'
          ? 'until this run ends (embedded server; set TEST_DATABASE_URL to keep it longer)'
          : 'until the next run starts';
      console.warn(`test database kept for inspection ${until}: ${database.url}`);
      return;
    }
    await database.drop();
  });
  return {
    get url(): string {
      if (database === undefined) {
        throw new Error(`useTestDatabase('${label}'): .url read before its beforeAll ran`);
      }
      return database.url;
    },
  };
}
