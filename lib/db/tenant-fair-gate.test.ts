import { describe, expect, it } from 'vitest';
import { TenantFairGate, TenantReadsBusyError } from './tenant-fair-gate.ts';

/** A task that records when it starts and ends only when the test lets it. */
function heldTask(started: string[], name: string) {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return {
    release: () => release(),
    task: async () => {
      started.push(name);
      await done;
      return name;
    },
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('TenantFairGate', () => {
  it("starts another tenant's task at once while one tenant has queued many", async () => {
    const gate = new TenantFairGate({ capacity: 4, perTenant: 2, maxQueuedPerTenant: 16 });
    const started: string[] = [];
    const heavy = Array.from({ length: 8 }, (_, i) => heldTask(started, `a${i}`));
    const runs = heavy.map((h) => gate.run('a', h.task));
    const light = heldTask(started, 'b');
    const b = gate.run('b', light.task);
    await tick();
    // Two of A's (its share) and B's, with none of A's finished.
    expect(started).toEqual(['a0', 'a1', 'b']);
    light.release();
    expect(await b).toBe('b');
    for (const h of heavy) h.release();
    expect(await Promise.all(runs)).toHaveLength(8);
  });

  it('takes waiting tasks from the tenants in turn, one each', async () => {
    const gate = new TenantFairGate({ capacity: 1, perTenant: 1, maxQueuedPerTenant: 16 });
    const started: string[] = [];
    const held = new Map<string, ReturnType<typeof heldTask>>();
    const runs = [
      ...['a0', 'a1', 'a2', 'a3'].map((n) => ['a', n] as const),
      ...['b0', 'b1'].map((n) => ['b', n] as const),
    ].map(([tenant, name]) => {
      const h = heldTask(started, name);
      held.set(name, h);
      return gate.run(tenant, h.task);
    });
    for (let i = 0; i < held.size; i++) {
      await tick();
      held.get(started.at(-1)!)!.release(); // the one running ends; the next starts
    }
    await Promise.all(runs);
    expect(started).toEqual(['a0', 'b0', 'a1', 'b1', 'a2', 'a3']);
  });

  it("refuses a tenant's task beyond its queue, and no one else's", async () => {
    const gate = new TenantFairGate({ capacity: 1, perTenant: 1, maxQueuedPerTenant: 2 });
    const started: string[] = [];
    const held = Array.from({ length: 3 }, (_, i) => heldTask(started, `a${i}`));
    const runs = held.map((h) => gate.run('a', h.task));
    await expect(gate.run('a', () => Promise.resolve('a3'))).rejects.toBeInstanceOf(
      TenantReadsBusyError,
    );
    const b = gate.run('b', () => Promise.resolve('b'));
    for (const h of held) h.release();
    expect(await b).toBe('b');
    await Promise.all(runs);
  });

  it('frees the place of a task that fails', async () => {
    const gate = new TenantFairGate({ capacity: 1, perTenant: 1, maxQueuedPerTenant: 2 });
    await expect(gate.run('a', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await gate.run('a', () => Promise.resolve('next'))).toBe('next');
  });
});
