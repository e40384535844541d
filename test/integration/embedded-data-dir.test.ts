import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { EMBEDDED_SHARED_DIR } from '../../dev/embedded-postgres/database-server.ts';
import { chooseDataDir } from '../../dev/embedded-postgres/embedded-checkout.ts';
import { unconfiguredEnv } from '../support/fresh-clone.ts';

/**
 * A checkout the postgres user cannot enter (a parent of mode 700, as root's home is). Only root
 * meets it: PostgreSQL refuses to run as root, so the embedded server runs as `postgres`, and
 * that user must reach the data directory. Fresh, the cluster goes to the shared directory, and
 * the start says so; with a cluster already in `.data/pg` (the checkout was moved there), the
 * start fails in one line rather than run on an empty database elsewhere.
 */
const MAIN = join(import.meta.dirname, '..', '..', 'app', 'main.ts');
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
/** tsx compiles main.ts's imports before the refusal: seconds on a loaded machine. */
const START_TIMEOUT_MS = 60_000;
const asRoot = process.getuid?.() === 0;
let dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  dirs = [];
});

/** `<private>/checkout/.data`, its parent of mode 700; with a cluster's marker if `withCluster`. */
async function privateCheckout(
  withCluster: boolean,
): Promise<{ parent: string; checkout: string }> {
  const parent = await mkdtemp(join(tmpdir(), 'pgw-private-'));
  dirs.push(parent);
  await chmod(parent, 0o700);
  const checkout = join(parent, 'checkout');
  await mkdir(join(checkout, '.data'), { recursive: true });
  if (withCluster) {
    await mkdir(join(checkout, '.data', 'pg'), { mode: 0o700 });
    await writeFile(join(checkout, '.data', 'pg', 'PG_VERSION'), '17\n');
  }
  return { parent, checkout };
}

/** Where a private checkout's cluster would go under `sharedDir`. */
function sharedHome(sharedDir: string, stateDir: string): string {
  return join(sharedDir, createHash('sha256').update(stateDir).digest('hex').slice(0, 16));
}

describe.runIf(asRoot)('an embedded data directory the postgres user cannot reach', () => {
  it(
    'with a cluster in .data/pg: `npm start` fails in one line naming it, the barrier and the fix',
    async () => {
      const { parent, checkout } = await privateCheckout(true);
      const child = spawn(process.execPath, ['--import', TSX, MAIN], {
        cwd: checkout,
        env: unconfiguredEnv({ PORT: '0' }),
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: START_TIMEOUT_MS,
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const code = await new Promise((resolve) => child.once('close', resolve));
      expect(code, stderr).toBe(1);
      expect(stdout).toBe('');
      const lines = stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toBe(
        `start failed: ${checkout}/.data/pg holds this checkout's database, but PostgreSQL ` +
          `runs as the postgres user, who cannot enter ${parent}, and starting elsewhere would ` +
          `start an empty one: let it in (chmod o+x ${parent}), move the checkout to a directory ` +
          'every user may search (e.g. /srv or /opt), or set DATABASE_URL',
      );
      // Nothing was started or made elsewhere for it.
      expect(existsSync(sharedHome(EMBEDDED_SHARED_DIR, join(checkout, '.data')))).toBe(false);
      expect(existsSync(join(checkout, '.data', 'embedded-postgres.json'))).toBe(false);
    },
    START_TIMEOUT_MS,
  );

  it('fresh: the cluster goes to the shared directory, and a warning names both places', async () => {
    const { parent, checkout } = await privateCheckout(false);
    const sharedDir = await mkdtemp(join(tmpdir(), 'pgw-shared-'));
    dirs.push(sharedDir);
    await chmod(sharedDir, 0o755);
    const stateDir = join(checkout, '.data');
    const warnings: string[] = [];
    const dataDir = await chooseDataDir(stateDir, sharedDir, (line) => warnings.push(line));
    expect(dataDir).toBe(join(sharedHome(sharedDir, stateDir), 'pg'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`the postgres user cannot enter ${parent}`);
    expect(warnings[0]).toContain(`database is in ${dataDir}, not ${stateDir}/pg`);
  });

  it('a checkout the postgres user can enter keeps its cluster in .data/pg, silently', async () => {
    const { parent, checkout } = await privateCheckout(true);
    await chmod(parent, 0o755);
    const warnings: string[] = [];
    const stateDir = join(checkout, '.data');
    const sharedDir = join(parent, 'unused-shared');
    expect(await chooseDataDir(stateDir, sharedDir, (line) => warnings.push(line))).toBe(
      join(stateDir, 'pg'),
    );
    expect(warnings).toEqual([]);
    expect(existsSync(sharedDir)).toBe(false);
  });
});
