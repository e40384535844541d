import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  externalServer,
  findFreePort,
  isServerAnswering,
  startEmbeddedServer,
  type DatabaseServer,
} from './database-server.ts';

/** A local server answers a loopback connect in milliseconds; a second means none is there. */
const LOCAL_PROBE_TIMEOUT_MS = 1_000;

/**
 * The server the benches and the chaos suite share when nothing else is said: `configuredUrl`,
 * else the PostgreSQL on 127.0.0.1:5432 (as PGUSER, default root) if it answers, else nothing.
 * (The test suite's choice, in test/support/global-setup.ts, also falls back to the `postgres`
 * role and refuses an explicit URL that does not answer.)
 */
export async function sharedServerUrl(
  configuredUrl: string | undefined,
): Promise<string | undefined> {
  if (configuredUrl) return configuredUrl;
  const local = `postgres://${process.env['PGUSER'] ?? 'root'}@127.0.0.1:5432/postgres`;
  return (await isServerAnswering(local, LOCAL_PROBE_TIMEOUT_MS)) ? local : undefined;
}

/**
 * Where a tool's scratch databases go: the shared server above, else a throwaway embedded one
 * (no fsync; its data directory, under `label`, is deleted when it stops).
 */
export async function openScratchServer(
  configuredUrl: string | undefined,
  label: string,
): Promise<DatabaseServer> {
  const shared = await sharedServerUrl(configuredUrl);
  if (shared !== undefined) return externalServer(shared);
  const dataDir = await mkdtemp(join(tmpdir(), `pgw-${label}-pg-`));
  return startEmbeddedServer({ dataDir, port: await findFreePort(), persistent: false });
}
