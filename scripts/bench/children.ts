/**
 * The processes a bench starts: each runs the project's built JavaScript (scripts/build.ts) with
 * plain node, as `npm start` does, announces its URL on stdout, and is stopped (SIGTERM, then
 * SIGKILL if it lingers) before the bench exits, whatever happened.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

/** Start-up includes the gateway's migrations check: seconds, not minutes. */
const READY_TIMEOUT_MS = 60_000;
/** A clean stop drains in-flight requests (the gateway allows 10 s) and writes a CPU profile. */
const STOP_TIMEOUT_MS = 20_000;

export interface Child {
  process: ChildProcess;
  url: string;
}

export class Children {
  private readonly started: Child[] = [];

  /** `builtDir`: where scripts/build.ts put the JavaScript of every source file named below. */
  constructor(private readonly builtDir: string) {}

  /** Spawns `entry`, waits for `ready` to match its output, and returns the URL it captured. */
  async start(spec: {
    name: string;
    /** The source file (`app/main.ts`); its built JavaScript runs. */
    entry: string;
    env: Record<string, string>;
    ready: RegExp;
    /** Node flags (e.g. --cpu-prof). */
    nodeArgs?: string[];
  }): Promise<Child> {
    const child = spawn(process.execPath, [...(spec.nodeArgs ?? []), this.built(spec.entry)], {
      env: { ...process.env, ...spec.env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const started = { process: child, url: '' };
    this.started.push(started);
    started.url = await readyUrl(child, spec);
    return started;
  }

  /** Stops every child still running, all at once, and waits for each to exit. */
  async stopAll(): Promise<void> {
    await Promise.all(this.started.map((child) => stop(child.process)));
  }

  private built(source: string): string {
    return join(this.builtDir, source.replace(/\.ts$/, '.js'));
  }
}

function readyUrl(child: ChildProcess, spec: { name: string; ready: RegExp }): Promise<string> {
  let output = '';
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      reject(new Error(`${spec.name} ${why}:\n${output}`));
    };
    const timer = setTimeout(() => fail('did not start'), READY_TIMEOUT_MS);
    child.once('exit', (code) => fail(`exited with ${code} before it was ready`));
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const url = spec.ready.exec(output)?.[1];
      if (url === undefined) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      // Keep draining its stdout (a full pipe would stall the child) without keeping it.
      child.stdout?.off('data', onData);
      child.stdout?.on('data', () => undefined);
      resolve(url);
    };
    child.stdout?.on('data', onData);
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}
