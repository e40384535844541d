import { chmod, mkdtemp, readFile, readdir, rm, rmdir, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  copyWorkingTree,
  installDependencies,
  readmeCurlExample,
  runShell,
  startGateway,
  unconfiguredEnv,
  type StartedGateway,
} from '../support/fresh-clone.ts';

/**
 * The README's two commands on a machine the project has never seen: a checkout inside a
 * directory only its owner may enter (root's home is mode 700), `npm start` with nothing
 * configured (embedded PostgreSQL, the sandbox provider in-process), and the README's curl
 * example against it. As root, PostgreSQL runs as the `postgres` user, who cannot enter such a
 * directory: neither the binaries under node_modules nor a data directory under .data/ are
 * reachable for it. Then the starts that used to collide on the embedded server's port: a second
 * gateway of the same checkout, a start after a gateway was killed with its server left running,
 * and a second checkout beside the first.
 */
const PROJECT = join(import.meta.dirname, '..', '..');
/** Where the gateway keeps what the postgres user must reach when the checkout is private. */
const SHARED_RUNTIME_DIR = '/var/lib/payments-gateway';
/** npm start: tsc of the whole project, initdb, migrations; a loaded CI machine is slow at all. */
const NPM_START_TIMEOUT_MS = 180_000;
/** The built gateway against an initialised cluster: no tsc, no initdb. */
const NODE_START_TIMEOUT_MS = 60_000;
/** One createPayment against the sandbox provider answers in milliseconds. */
const CURL_TIMEOUT_MS = 30_000;
/** A postmaster asked to stop (SIGINT, fast shutdown) exits in well under a second. */
const POSTMASTER_STOP_TIMEOUT_MS = 30_000;
const POLL_MS = 100;

interface Checkout {
  dir: string;
  env: NodeJS.ProcessEnv;
}

let root = '';
let checkoutA: Checkout | undefined;
let sharedBefore: string[] | undefined;
const gateways: StartedGateway[] = [];

/** `.data/embedded-postgres.json`: where the checkout's cluster lives and its port. */
async function embeddedRecord(checkout: Checkout): Promise<{ dataDir: string; port: number }> {
  const text = await readFile(join(checkout.dir, '.data', 'embedded-postgres.json'), 'utf8');
  return JSON.parse(text) as { dataDir: string; port: number };
}

async function postmasterPid(dataDir: string): Promise<number | undefined> {
  const text = await readFile(join(dataDir, 'postmaster.pid'), 'utf8').catch(() => '');
  const pid = Number.parseInt(text.split('\n')[0] ?? '', 10);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function untilGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (alive(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(POLL_MS);
  }
  return true;
}

/** Postmasters whose command line names a directory of this test (data dirs, binaries). */
async function postmastersUnder(paths: string[]): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc').catch(() => [])) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes('postgres') && paths.some((path) => cmdline.includes(path))) {
      pids.push(pid);
    }
  }
  return pids;
}

async function stopPostmasters(pids: number[]): Promise<void> {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGINT');
    } catch {
      continue;
    }
    if (!(await untilGone(pid, POSTMASTER_STOP_TIMEOUT_MS))) process.kill(pid, 'SIGKILL');
  }
}

async function newCheckout(name: string): Promise<Checkout> {
  const dir = join(root, name);
  await copyWorkingTree(PROJECT, dir);
  await installDependencies(PROJECT, dir);
  // PORT=0: the README's 4000 may be taken on a shared machine; nothing else is configured.
  return { dir, env: unconfiguredEnv({ PORT: '0' }) };
}

async function start(checkout: Checkout, command: 'npm start' | 'node'): Promise<StartedGateway> {
  const gateway = await startGateway({
    cwd: checkout.dir,
    command: command === 'npm start' ? ['npm', 'start'] : ['node', 'dist/app/main.js'],
    env: checkout.env,
    timeoutMs: command === 'npm start' ? NPM_START_TIMEOUT_MS : NODE_START_TIMEOUT_MS,
  });
  gateways.push(gateway);
  return gateway;
}

interface CurlAnswer {
  data?: {
    createPayment?: {
      payment: { id: string; status: string; amount: string; currency: string };
      idempotency: { key: string; replayed: boolean };
    };
  };
  errors?: unknown[];
}

/** The README's curl example, run in the checkout as a newcomer would, against `gateway`. */
async function readmeCurl(checkout: Checkout, gateway: StartedGateway): Promise<CurlAnswer> {
  const example = await readmeCurlExample(join(checkout.dir, 'README.md'));
  const script = example.replaceAll('http://127.0.0.1:4000', gateway.url);
  expect(script).toContain(`${gateway.url}/graphql`);
  const stdout = await runShell({ cwd: checkout.dir, script, timeoutMs: CURL_TIMEOUT_MS });
  return JSON.parse(stdout) as CurlAnswer;
}

beforeAll(async () => {
  sharedBefore = await readdir(SHARED_RUNTIME_DIR).catch(() => undefined);
  root = await mkdtemp(join(tmpdir(), 'pgw-fresh-clone-'));
  // Private, as root's home is: only its owner may enter it.
  await chmod(root, 0o700);
  checkoutA = await newCheckout('checkout-a');
}, 120_000);

afterAll(async () => {
  await Promise.all(gateways.map((gateway) => gateway.stop()));
  // A gateway killed with SIGKILL leaves its postmaster running; stop every one of this test.
  const paths = [root];
  for (const name of ['checkout-a', 'checkout-b']) {
    const record = await readFile(join(root, name, '.data', 'embedded-postgres.json'), 'utf8')
      .then((text) => JSON.parse(text) as { dataDir: string })
      .catch(() => undefined);
    if (record !== undefined) paths.push(record.dataDir);
  }
  await stopPostmasters(await postmastersUnder(paths));
  if (root !== '') await rm(root, { recursive: true, force: true });
  // What this test put under the shared directory (a cluster per checkout, the binaries).
  const sharedAfter = await readdir(SHARED_RUNTIME_DIR).catch(() => []);
  for (const entry of sharedAfter.filter((name) => !(sharedBefore ?? []).includes(name))) {
    await rm(join(SHARED_RUNTIME_DIR, entry), { recursive: true, force: true });
  }
  // Created by this test and now empty: gone too (rmdir leaves it if anyone else uses it).
  if (sharedBefore === undefined) await rmdir(SHARED_RUNTIME_DIR).catch(() => undefined);
}, 120_000);

describe('a fresh clone inside a private directory, nothing configured', () => {
  it(
    "npm start runs the embedded database and the README's curl example takes a payment",
    async () => {
      const checkout = checkoutA!;
      const gateway = await start(checkout, 'npm start');
      const key = (await readFile(join(checkout.dir, '.data', 'demo-api-key'), 'utf8')).trim();
      expect(gateway.output()).toContain(`tenant demo: API key ${key}`);

      // The postgres user cannot enter the checkout: the cluster lives where it can, and the
      // start says where, instead of the .data/pg a reader would look in.
      const { dataDir } = await embeddedRecord(checkout);
      expect(dataDir.startsWith(root)).toBe(false);
      expect(gateway.output()).toContain(
        `WARNING: the postgres user cannot enter ${root}, so this checkout's database is in ${dataDir}, not ${join(checkout.dir, '.data', 'pg')}`,
      );

      // The generated internal token is printed once, and kept for the next starts (0600).
      const tokenFile = join(checkout.dir, '.data', 'internal-token');
      const token = (await readFile(tokenFile, 'utf8')).trim();
      expect(gateway.output()).toContain(`Authorization: Bearer ${token})`);
      expect((await stat(tokenFile)).mode & 0o777).toBe(0o600);

      const answer = await readmeCurl(checkout, gateway);
      expect(answer.errors, gateway.output()).toBeUndefined();
      expect(answer.data?.createPayment?.payment.status).toBe('SUCCEEDED');
      expect(answer.data?.createPayment?.idempotency.replayed).toBe(false);
    },
    NPM_START_TIMEOUT_MS + 30_000,
  );

  it(
    "a second gateway of the same checkout shares the first one's running database",
    async () => {
      const checkout = checkoutA!;
      const [first] = gateways;
      const firstAnswer = await readmeCurl(checkout, first!);
      const second = await start(checkout, 'node');
      // The demo key was printed when it was made; a later start shows only its display prefix.
      const key = (await readFile(join(checkout.dir, '.data', 'demo-api-key'), 'utf8')).trim();
      expect(second.output()).not.toContain(key);
      expect(second.output()).toContain(`tenant demo: API key (not shown; ${key.slice(0, 12)}…)`);
      // The same internal token, named by its file, not printed again: first's clients go on.
      const tokenFile = join(checkout.dir, '.data', 'internal-token');
      const token = (await readFile(tokenFile, 'utf8')).trim();
      expect(second.output()).not.toContain(token);
      expect(second.output()).toContain(`Authorization: Bearer (not shown; ${tokenFile})`);
      const trpc = await fetch(
        `${second.url}/trpc/tenants.get?input=${encodeURIComponent('{"tenant":"demo"}')}`,
        {
          headers: { authorization: `Bearer ${token}` },
        },
      );
      expect(trpc.status).toBe(200);
      const fromSecond = await readmeCurl(checkout, second);
      // The same payment, replayed: one database behind both gateways.
      expect(fromSecond.data?.createPayment?.payment).toEqual(
        firstAnswer.data?.createPayment?.payment,
      );
      expect(fromSecond.data?.createPayment?.idempotency.replayed).toBe(true);

      // The second one leaves the server it did not start running for the first.
      expect(await second.stop()).toEqual({ code: 0, signal: null });
      const afterSecond = await readmeCurl(checkout, first!);
      expect(afterSecond.data?.createPayment?.idempotency.replayed).toBe(true);

      // npm itself dies of the group's SIGTERM; what counts is that its gateway stopped the
      // server it started.
      const pid = await postmasterPid((await embeddedRecord(checkout)).dataDir);
      expect(pid).toBeDefined();
      await first!.stop();
      expect(await untilGone(pid!, POSTMASTER_STOP_TIMEOUT_MS)).toBe(true);
    },
    3 * NODE_START_TIMEOUT_MS,
  );

  it(
    'a start after a gateway was killed with SIGKILL takes over the server it left running',
    async () => {
      const checkout = checkoutA!;
      const killed = await start(checkout, 'node');
      const before = await readmeCurl(checkout, killed);
      // The gateway alone, not its group: its postmaster survives it, as after `kill -9`.
      killed.child.kill('SIGKILL');
      await killed.exited;
      const { dataDir, port } = await embeddedRecord(checkout);
      const orphan = await postmasterPid(dataDir);
      expect(orphan !== undefined && alive(orphan)).toBe(true);

      const next = await start(checkout, 'node');
      const after = await readmeCurl(checkout, next);
      expect(after.data?.createPayment?.payment).toEqual(before.data?.createPayment?.payment);
      expect(after.data?.createPayment?.idempotency.replayed).toBe(true);
      expect((await embeddedRecord(checkout)).port).toBe(port);
      expect(await postmasterPid(dataDir)).toBe(orphan);

      // A second checkout beside it: its own cluster, on another port, its own demo tenant.
      const checkoutB = await newCheckout('checkout-b');
      const other = await start(checkoutB, 'npm start');
      const fromB = await readmeCurl(checkoutB, other);
      expect(fromB.data?.createPayment?.payment.status).toBe('SUCCEEDED');
      expect(fromB.data?.createPayment?.idempotency.replayed).toBe(false);
      const recordB = await embeddedRecord(checkoutB);
      expect(recordB.port).not.toBe(port);
      expect(recordB.dataDir).not.toBe(dataDir);
      const pidB = await postmasterPid(recordB.dataDir);
      expect(pidB).toBeDefined();
      await other.stop();
      expect(await untilGone(pidB!, POSTMASTER_STOP_TIMEOUT_MS)).toBe(true);

      // The orphan was taken over: stopping the gateway stops it too.
      expect(await next.stop()).toEqual({ code: 0, signal: null });
      expect(await untilGone(orphan!, POSTMASTER_STOP_TIMEOUT_MS)).toBe(true);
    },
    NPM_START_TIMEOUT_MS + 3 * NODE_START_TIMEOUT_MS,
  );

  it(
    'a start whose recorded port something else now holds moves to a free port',
    async () => {
      const checkout = checkoutA!;
      const { port } = await embeddedRecord(checkout);
      const squatter = createServer();
      await new Promise<void>((resolve, reject) => {
        squatter.once('error', reject);
        squatter.listen(port, '127.0.0.1', resolve);
      });
      try {
        const gateway = await start(checkout, 'node');
        const answer = await readmeCurl(checkout, gateway);
        expect(answer.data?.createPayment?.idempotency.replayed).toBe(true);
        expect((await embeddedRecord(checkout)).port).not.toBe(port);
        expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      } finally {
        await new Promise((resolve) => squatter.close(resolve));
      }
    },
    2 * NODE_START_TIMEOUT_MS,
  );
});
