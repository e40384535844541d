import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { INTERNAL_TOKEN } from './test-stack.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** A CLI run compiles the script with tsx first: seconds, not milliseconds, on a busy machine. */
const CLI_TIMEOUT_MS = 30_000;

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `npm run ops` as an operator runs it: a real child process against the gateway at `gatewayUrl`
 * over HTTP, as USER ci-operator with the test INTERNAL_TOKEN. `env` entries set to undefined are
 * removed from its environment.
 */
export function runOpsCli(
  gatewayUrl: string,
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<CliRun> {
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    GATEWAY_URL: gatewayUrl,
    INTERNAL_TOKEN,
    USER: 'ci-operator',
  };
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete childEnv[name];
    else childEnv[name] = value;
  }
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'ops/main.ts', ...args], {
      cwd: REPO_ROOT,
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: CLI_TIMEOUT_MS,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
