import { describe, expect, it } from 'vitest';
import { FaultInjectedError, FaultPoints } from '../../lib/faults.ts';
import { FAULT_POINT_CATALOG } from '../../app/fault-point-catalog.ts';
import { loadConfig } from '../../app/config.ts';

describe('fault points', () => {
  it('are inert unless armed', async () => {
    await expect(new FaultPoints().hit('anything')).resolves.toBeUndefined();
  });

  it('throw or call when armed, and stop when disarmed', async () => {
    const faults = FaultPoints.fromSpec('a.b=throw', new Set(['a.b']));
    await expect(faults.hit('a.b')).rejects.toBeInstanceOf(FaultInjectedError);
    const seen: string[] = [];
    faults.arm('c', { kind: 'call', run: (name) => void seen.push(name) });
    await faults.hit('c');
    faults.disarm('c');
    await faults.hit('c');
    expect(seen).toEqual(['c']);
  });

  it('refuse a malformed spec instead of silently arming nothing', () => {
    expect(() => FaultPoints.fromSpec('a=explode', new Set(['a']))).toThrow();
  });

  it('refuse a point nobody passes, which would arm nothing', () => {
    expect(() =>
      FaultPoints.fromSpec('createPayment.finshed.before-commit=crash', FAULT_POINT_CATALOG),
    ).toThrow(/unknown fault point: createPayment\.finshed\.before-commit/);
    expect(() =>
      FaultPoints.fromSpec('createPayment.finished.before-commit=crash', FAULT_POINT_CATALOG),
    ).not.toThrow();
  });

  it('are refused at start outside NODE_ENV=test', () => {
    const env = { FAULT_POINTS: 'createPayment.finished.before-commit=crash' };
    expect(() => loadConfig({ ...env, NODE_ENV: 'production' })).toThrow(/NODE_ENV=test/);
    expect(() => loadConfig(env)).toThrow(/NODE_ENV=test/);
    expect(loadConfig({ ...env, NODE_ENV: 'test' }).faultPoints).toBe(env.FAULT_POINTS);
  });
});
