import { describe, expect, it } from 'vitest';
import type { OwnedRequest } from '../../lib/idempotency/owned-request.ts';
import { resolveWithProvider } from '../../services/payments/provider-resolution.ts';

/**
 * An attempt's calls each wait for the lease's heartbeat first (OwnedRequest.external), and a
 * database failing over holds a heartbeat for seconds. The failover tier found an attempt
 * whose whole budget went there: its re-send went out with a budget below zero, failed the
 * provider service's input check, and counted as an unanswered attempt, like a probe given 1 ms.
 * Three such and an approving card ended FAILED/PROVIDER_CHARGE_ABSENT (seed 1064459703). An
 * attempt that never asked is `unasked` now, and counts for nothing.
 */
const TIMEOUT_MS = 200;

/** A request whose every call first waits `heldMs`, as behind a heartbeat stuck on the database. */
function requestHeldFor(heldMs: () => number): OwnedRequest {
  return {
    async external<T>(call: () => Promise<T>): Promise<T> {
      await new Promise((resolve) => setTimeout(resolve, heldMs()));
      return call();
    },
  } as unknown as OwnedRequest;
}

function effect(calls: string[], probe: 'missing' | 'timeout' = 'missing') {
  return {
    timeoutMs: TIMEOUT_MS,
    send: ({ timeoutMs }: { timeoutMs: number }) => {
      calls.push(`send ${timeoutMs > 0 ? 'with time' : 'without time'}`);
      return Promise.resolve({ kind: 'approved' as const });
    },
    probe: ({ timeoutMs }: { timeoutMs: number }) => {
      calls.push(`probe ${timeoutMs > 0 ? 'with time' : 'without time'}`);
      return Promise.resolve({ kind: probe });
    },
  };
}

describe('a provider attempt whose time went on keeping its lease', () => {
  it('asks nothing and counts nothing when the wait ate the whole budget', async () => {
    const calls: string[] = [];
    const outcome = await resolveWithProvider(
      requestHeldFor(() => 2 * TIMEOUT_MS + 50),
      {
        resumed: true,
        ...effect(calls),
      },
    );
    expect(outcome).toEqual({ kind: 'unasked' });
    expect(calls).toEqual([]);
  });

  it('does not send again with no time left after a probe found nothing', async () => {
    const calls: string[] = [];
    let held = 0;
    // The probe goes out at once; the re-send's heartbeat then holds the attempt past its end.
    const outcome = await resolveWithProvider(
      requestHeldFor(() => (held++ === 0 ? 0 : 2 * TIMEOUT_MS + 50)),
      { resumed: true, ...effect(calls) },
    );
    expect(outcome).toEqual({ kind: 'unasked' });
    expect(calls).toEqual(['probe with time']);
  });

  it('still counts its own send left unanswered, when no probe fits after it', async () => {
    const calls: string[] = [];
    let held = 0;
    const outcome = await resolveWithProvider(
      requestHeldFor(() => (held++ === 0 ? 0 : 2 * TIMEOUT_MS + 50)),
      {
        resumed: false,
        ...effect(calls),
        send: () => {
          calls.push('send');
          return Promise.resolve({ kind: 'timeout' as const });
        },
      },
    );
    expect(outcome).toEqual({ kind: 'timeout' });
    expect(calls).toEqual(['send']);
  });

  it('counts a probe that went out with time and got no answer', async () => {
    const calls: string[] = [];
    const outcome = await resolveWithProvider(
      requestHeldFor(() => 0),
      {
        resumed: true,
        ...effect(calls, 'timeout'),
      },
    );
    expect(outcome).toEqual({ kind: 'timeout' });
    expect(calls).toEqual(['probe with time']);
  });

  it('sends again in the time left when nothing held it', async () => {
    const calls: string[] = [];
    const outcome = await resolveWithProvider(
      requestHeldFor(() => 0),
      {
        resumed: true,
        ...effect(calls),
      },
    );
    expect(outcome).toEqual({ kind: 'approved' });
    expect(calls).toEqual(['probe with time', 'send with time']);
  });
});
