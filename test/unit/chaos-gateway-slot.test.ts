import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import type { Child } from '../chaos/processes.ts';
import { GatewaySlot } from '../chaos/stack.ts';

/**
 * The chaos harness's own bookkeeping. A soak run (seed 1599255675) reported four gateways as
 * having died "by themselves" of SIGKILL, with every money invariant holding: the harness had
 * killed them. Its kill-while-starting fault landed in the gap between the gateway printing its
 * ready line (the start resolved) and the slot taking the new process as its own, so the slot
 * adopted a process it was killing and counted its death as a crash.
 */
const started: ChildProcess[] = [];

afterEach(() => {
  for (const proc of started.splice(0)) proc.kill('SIGKILL');
});

function sleeper(): { proc: ChildProcess; child: Child } {
  const proc = spawn('sleep', ['30'], { stdio: 'ignore' });
  started.push(proc);
  const exited = once(proc, 'exit').then(() => undefined);
  const child: Child = {
    process: proc,
    pid: proc.pid ?? 0,
    url: 'http://127.0.0.1:1',
    exited,
    logFile: '/dev/null',
    exit: () =>
      proc.exitCode === null && proc.signalCode === null
        ? null
        : { code: proc.exitCode, signal: proc.signalCode },
    alive: () => proc.exitCode === null && proc.signalCode === null,
  };
  return { proc, child };
}

describe('a gateway slot', () => {
  it('does not count as a crash a gateway it killed just as it became ready', async () => {
    const { proc, child } = sleeper();
    let ready!: (child: Child) => void;
    const slot = new GatewaySlot(0, (onSpawn) => {
      onSpawn(proc);
      return new Promise<Child>((resolve) => (ready = resolve));
    });
    const booting = slot.boot();
    await Promise.resolve(); // boot() is now awaiting the start
    ready(child); // the ready line: the start resolves, the slot has not resumed yet
    const killed = slot.killWhileStarting(); // the fault's SIGKILL lands in that gap
    expect(await killed).toBe(true);
    expect(await booting).toBe(false);
    await child.exited;
    expect(child.exit()?.signal).toBe('SIGKILL');
    await new Promise((resolve) => setImmediate(resolve));
    expect(slot.crashes).toEqual([]);
    expect(slot.state).toBe('down');
  });

  it('still counts a gateway that dies on its own after it started', async () => {
    const { proc, child } = sleeper();
    const slot = new GatewaySlot(0, (onSpawn) => {
      onSpawn(proc);
      return Promise.resolve(child);
    });
    expect(await slot.boot()).toBe(true);
    proc.kill('SIGKILL'); // not the slot's doing
    await child.exited;
    await new Promise((resolve) => setImmediate(resolve));
    expect(slot.crashes).toEqual([{ exit: 'SIGKILL', logFile: '/dev/null' }]);
  });
});
