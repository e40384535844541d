/**
 * A checkout as a newcomer has it after `git clone && npm ci`, somewhere of our choosing, and the
 * gateway started in it with nothing configured. Used to prove the README's two commands on a
 * machine that is not the one the project was developed on.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Copying a few hundred files and hard-linking node_modules takes seconds on a busy machine. */
const COPY_TIMEOUT_MS = 60_000;
/** Room for `git ls-files` on a repository of this size (a few hundred paths). */
const GIT_LIST_MAX_BYTES = 16 * 1024 * 1024;
/** SIGTERM drains and stops the embedded server in a second or two; past this, SIGKILL. */
const STOP_TIMEOUT_MS = 30_000;
/** How often a wait for a gateway's ready line looks at its output. */
const READY_POLL_MS = 100;

/**
 * Copies the project's working tree (committed, modified and new files, as `git ls-files` sees
 * them, without what .gitignore excludes: no node_modules, .data, dist) to `target`, so the test
 * runs the code under test rather than the last commit, which a `git clone` would give.
 */
export async function copyWorkingTree(project: string, target: string): Promise<void> {
  const { stdout } = await run(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    { cwd: project, maxBuffer: GIT_LIST_MAX_BYTES, timeout: COPY_TIMEOUT_MS },
  );
  for (const file of stdout.split('\0').filter(Boolean)) {
    await mkdir(dirname(join(target, file)), { recursive: true });
    // A tracked file deleted in the working tree is not part of it.
    await copyFile(join(project, file), join(target, file)).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    });
  }
}

/**
 * node_modules as `npm ci` would install it, by hard links (a copy where links cannot be made).
 * The files get paths inside `target`, as an install does: a symlink to the project's own
 * node_modules would leave the PostgreSQL binaries where any user may reach them, and so hide
 * the failure of a checkout inside a private directory.
 */
export async function installDependencies(project: string, target: string): Promise<void> {
  const from = join(project, 'node_modules');
  const to = join(target, 'node_modules');
  await run('cp', ['-al', from, to], { timeout: COPY_TIMEOUT_MS }).catch(() =>
    run('cp', ['-a', from, to], { timeout: COPY_TIMEOUT_MS }),
  );
}

/** The environment of a newcomer's shell: nothing of this project's configuration. */
export function unconfiguredEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  const project = /^(DATABASE_URL|TEST_DATABASE_URL|PSP_URL|BOOTSTRAP_TENANTS|INTERNAL_TOKEN)$/;
  for (const [name, value] of Object.entries(process.env)) {
    // vitest's NODE_ENV=test and NODE_OPTIONS, libpq's PG* defaults: none is a newcomer's.
    if (project.test(name) || /^(NODE_ENV|NODE_OPTIONS|PG[A-Z]+|VITEST.*)$/.test(name)) continue;
    env[name] = value;
  }
  return { ...env, ...extra };
}

export interface StartedGateway {
  url: string;
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
  /** SIGTERM to the whole process group, SIGKILL after a bound; resolves with how it ended. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Runs `command` in `cwd` in a process group of its own (npm start runs the gateway under npm
 * and a shell), and waits, at most `timeoutMs`, for the gateway's "GraphQL: <url>" line.
 */
export async function startGateway(opts: {
  cwd: string;
  command: [string, ...string[]];
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
}): Promise<StartedGateway> {
  const [file, ...args] = opts.command;
  const child = spawn(file, args, {
    cwd: opts.cwd,
    env: opts.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer): void => {
    output += chunk.toString();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.once('error', (error) => (output += `spawn failed: ${error.message}\n`));
  const exited = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  const signalGroup = (signal: NodeJS.Signals): void => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal);
    } catch {
      // The group is gone already.
    }
  };
  const stop = async (): Promise<{ code: number | null; signal: NodeJS.Signals | null }> => {
    signalGroup('SIGTERM');
    const ended = await Promise.race([exited, sleep(STOP_TIMEOUT_MS).then(() => undefined)]);
    if (ended !== undefined) return ended;
    signalGroup('SIGKILL');
    return exited;
  };
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    const match = /GraphQL:\s+(http:\/\/127\.0\.0\.1:\d+)\/graphql/.exec(output);
    if (match?.[1] !== undefined) {
      return { url: match[1], child, exited, output: () => output, stop };
    }
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`${opts.command.join(' ')} in ${opts.cwd} did not start:\n${output}`);
    }
    await sleep(READY_POLL_MS);
  }
}

/** The README's first `curl` example, verbatim but for the gateway's address. */
export async function readmeCurlExample(readme: string): Promise<string> {
  const text = await readFile(readme, 'utf8');
  const block = [...text.matchAll(/```sh\n([\s\S]*?)```/g)]
    .map((match) => match[1] ?? '')
    .find((code) => code.includes('curl '));
  if (block === undefined) throw new Error(`no sh block with a curl command in ${readme}`);
  return block;
}

/** Runs a README shell snippet in `cwd` (where it reads .data/demo-api-key), bounded. */
export async function runShell(opts: {
  cwd: string;
  script: string;
  timeoutMs: number;
}): Promise<string> {
  const { stdout } = await run('sh', ['-c', opts.script], {
    cwd: opts.cwd,
    timeout: opts.timeoutMs,
  });
  return stdout;
}
