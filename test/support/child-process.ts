import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

/** How long a child may take to print its ready line (tsx compiles on start). */
const START_TIMEOUT_MS = 30_000;

export interface StartedChild {
  /** The first group of the ready line's pattern: the address the child serves. */
  url: string;
  child: ChildProcess;
  /** Resolves with the exit code or signal once the process is gone. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
  kill(signal: NodeJS.Signals): Promise<void>;
}

/**
 * Starts `node args` from the repository's root with `env`, and resolves once its output shows
 * `ready` (whose first group is the URL it serves). A child that exits or stays silent past the
 * start timeout fails the start, with everything it printed, named `name`.
 */
export async function startChild(input: {
  name: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  ready: RegExp;
}): Promise<StartedChild> {
  const child = spawn(process.execPath, input.args, {
    cwd: new URL('../..', import.meta.url).pathname,
    env: input.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const url = input.ready.exec(output)?.[1];
    if (url !== undefined) {
      return {
        url,
        child,
        exited,
        output: () => output,
        async kill(signal) {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          await exited;
        },
      };
    }
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${input.name} exited during start:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${input.name} did not start in time:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
