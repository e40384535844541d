import { describe, expect, it } from 'vitest';
import { FaultInjectedError, FaultPoints } from '../../services/kernel/faults.ts';

describe('fault points', () => {
  it('are inert unless armed', async () => {
    await expect(new FaultPoints().hit('anything')).resolves.toBeUndefined();
  });

  it('throw or call when armed, and stop when disarmed', async () => {
    const faults = FaultPoints.fromSpec('a.b=throw');
    await expect(faults.hit('a.b')).rejects.toBeInstanceOf(FaultInjectedError);
    const seen: string[] = [];
    faults.arm('c', { kind: 'call', run: (name) => void seen.push(name) });
    await faults.hit('c');
    faults.disarm('c');
    await faults.hit('c');
    expect(seen).toEqual(['c']);
  });

  it('refuse a malformed spec instead of silently arming nothing', () => {
    expect(() => FaultPoints.fromSpec('a=explode')).toThrow();
  });
});
