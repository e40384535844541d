/**
 * Named fault points at phase boundaries. Production code calls `faults.hit(name)`; unless a
 * test armed that name it returns at once, so the points cost one Map lookup. A test arms a
 * point in-process with an action, or a child process with `FAULT_POINTS=name=crash,…`, and
 * the process then dies exactly there, which is how crash recovery is proven for real.
 */
export type FaultAction =
  | { kind: 'crash' }
  | { kind: 'throw' }
  | { kind: 'call'; run: (name: string) => Promise<void> | void };

export class FaultInjectedError extends Error {
  constructor(readonly point: string) {
    super(`fault injected at ${point}`);
    this.name = 'FaultInjectedError';
  }
}

export class FaultPoints {
  private readonly armed = new Map<string, FaultAction>();

  /**
   * Parses `name=crash,other=throw` (the FAULT_POINTS variable of a test's child process). A name
   * outside `known` is refused: a misspelt point would arm nothing, and the crash test that
   * relied on it would pass without ever crashing.
   */
  static fromSpec(spec: string | undefined, known: ReadonlySet<string>): FaultPoints {
    const faults = new FaultPoints();
    for (const entry of (spec ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const [name, kind = 'crash'] = entry.split('=');
      if (!name || (kind !== 'crash' && kind !== 'throw')) {
        throw new Error(`bad FAULT_POINTS entry: ${entry}`);
      }
      if (!known.has(name)) throw new Error(`FAULT_POINTS names an unknown fault point: ${name}`);
      faults.arm(name, { kind });
    }
    return faults;
  }

  arm(name: string, action: FaultAction): void {
    this.armed.set(name, action);
  }

  disarm(name: string): void {
    this.armed.delete(name);
  }

  async hit(name: string): Promise<void> {
    const action = this.armed.get(name);
    if (action === undefined) return;
    switch (action.kind) {
      case 'crash':
        // SIGKILL, not exit(): no finally blocks, no pool shutdown, no flushed sockets — the
        // same as a power cut or the OOM killer, which is what recovery must survive.
        process.kill(process.pid, 'SIGKILL');
        // The signal is delivered asynchronously; never run past the point meanwhile.
        await new Promise(() => undefined);
        return;
      case 'throw':
        throw new FaultInjectedError(name);
      case 'call':
        await action.run(name);
        return;
    }
  }
}
