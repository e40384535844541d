/**
 * Child processes of a chaos run: the compiled JavaScript that `npm start` runs (built by
 * `scripts/build.ts` into a directory of the run's own), spawned with plain node, their output
 * written to a log file each, and all of them tracked so that no path out of the run — success,
 * failure, an exception, Ctrl-C — leaves one behind holding a port or a database session.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';

/** A start checks migrations and runs maintenance; on two busy cores that can take a while. */
const START_TIMEOUT_MS = 60_000;
const READY_POLL_MS = 25;
const REPO_ROOT = new URL('../..', import.meta.url).pathname;

export interface Child {
  readonly process: ChildProcess;
  readonly pid: number;
  /** The URL parsed from the ready line. */
  readonly url: string;
  readonly exited: Promise<void>;
  readonly logFile: string;
  /** How it ended: null while it runs. */
  exit(): { code: number | null; signal: NodeJS.Signals | null } | null;
  alive(): boolean;
}

export class ProcessRegistry {
  private readonly children = new Set<ChildProcess>();
  private readonly logs: WriteStream[] = [];
  private spawned = 0;

  /**
   * `builtDir`: where `buildJavaScript` put the project's JavaScript; an entry named by its
   * source path (`app/main.ts`) runs as its compiled module there.
   */
  constructor(
    private readonly logDir: string,
    private readonly builtDir: string,
  ) {}

  /**
   * Starts `entry` and resolves once its stdout shows `ready` (whose first group is the URL).
   * A child that exits or stays silent past the start timeout is killed and reported with the
   * name of its log file.
   */
  async start(input: {
    name: string;
    entry: string;
    env: Record<string, string>;
    ready: RegExp;
    /** Called at spawn, before the child is ready: for a kill during its start. */
    onSpawn?: (child: ChildProcess) => void;
  }): Promise<Child> {
    const logFile = join(
      this.logDir,
      `${String(++this.spawned).padStart(4, '0')}-${input.name}.log`,
    );
    const log = createWriteStream(logFile);
    this.logs.push(log);
    const entry = join(this.builtDir, input.entry.replace(/\.ts$/, '.js'));
    const child = spawn(process.execPath, [entry], {
      cwd: REPO_ROOT,
      // Plain node, as `npm start` runs it: nothing inherited (the harness runs under tsx) may
      // load tsx into the child.
      env: { ...process.env, NODE_ENV: 'production', NODE_OPTIONS: '', ...input.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.children.add(child);
    input.onSpawn?.(child);
    const exited = once(child, 'exit').then(() => {
      this.children.delete(child);
    });
    let head = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      if (head.length < 4_096) head += chunk.toString();
      log.write(chunk);
    });
    child.stderr?.on('data', (chunk: Buffer) => log.write(chunk));
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      const url = input.ready.exec(head)?.[1];
      if (url !== undefined && child.pid !== undefined) {
        return {
          process: child,
          pid: child.pid,
          url,
          exited,
          logFile,
          exit: () =>
            child.exitCode === null && child.signalCode === null
              ? null
              : { code: child.exitCode, signal: child.signalCode },
          alive: () => child.exitCode === null && child.signalCode === null,
        };
      }
      if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`${input.name} did not start; see ${logFile}`);
      }
      await new Promise((resolve) => setTimeout(resolve, READY_POLL_MS));
    }
  }

  /** SIGKILL for every child still running (a stopped one dies too), then closes the logs. */
  async killAll(): Promise<void> {
    const waiting = [...this.children].map((child) => once(child, 'exit').catch(() => undefined));
    for (const child of this.children) child.kill('SIGKILL');
    await Promise.all(waiting);
    await Promise.all(
      this.logs.map((log) => new Promise<void>((resolve) => log.end(() => resolve()))),
    );
  }

  /** Last resort for process 'exit' handlers, which must be synchronous. */
  killAllNow(): void {
    for (const child of this.children) child.kill('SIGKILL');
  }
}
