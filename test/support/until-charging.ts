import type { SandboxPsp } from '../../sandbox-psp/sandbox-server.ts';
import { waitUntil } from './wait-until.ts';

/**
 * Resolves once the sandbox has received `reference`'s charge: the moment a test may kill the
 * process that sent it, give up as its client, or send a duplicate that must meet it in flight
 * (pm_card_slow then works on it for a while before it answers). A fixed wait instead could end,
 * on a loaded machine, before the charge left.
 */
export async function untilCharging(sandbox: SandboxPsp, reference: string): Promise<void> {
  await waitUntil(() => sandbox.attempts({ reference }) >= 1, {
    timeoutMs: 20_000,
    intervalMs: 10,
    what: `the sandbox to receive ${reference}'s charge`,
  });
}
