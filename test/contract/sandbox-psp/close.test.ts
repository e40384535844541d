// The sandbox payment provider's contract, over real HTTP. close(): hanging requests are ended, and
// the server stops listening.
import { describe, expect, it } from 'vitest';
import { startSandboxPsp } from '../../../sandbox-psp/sandbox-server.ts';
import { chargeBody, newKey, postCharge } from '../support/sandbox-psp-contract.ts';

describe('close', () => {
  /** close() must not wait for deliberately hanging requests; far below every hang used here. */
  const CLOSE_BUDGET_MS = 1_000;
  /** Fails a close() that waits for the hangs quickly instead of after the 60 s default. */
  const CLOSE_TEST_TIMEOUT_MS = 5_000;

  it(
    'ends hanging requests and stops listening promptly',
    async () => {
      const local = await startSandboxPsp({ slowMs: 60_000, blackholeMs: 60_000 });
      const hanging = [
        'pm_card_lost_response',
        'pm_card_timeout',
        'pm_card_slow',
        'pm_card_unknown',
        'pm_card_unreachable',
      ].map((paymentMethod) =>
        postCharge({ baseUrl: local.url, key: newKey(), body: chargeBody({ paymentMethod }) }).then(
          () => 'answered',
          () => 'cut off',
        ),
      );
      await expect.poll(() => local.attempts()).toBe(hanging.length);
      const startedAt = Date.now();
      await local.close();
      expect(Date.now() - startedAt).toBeLessThan(CLOSE_BUDGET_MS);
      expect(await Promise.all(hanging)).toEqual(hanging.map(() => 'cut off'));
      await expect(fetch(`${local.url}/v1/health`)).rejects.toThrow();
    },
    CLOSE_TEST_TIMEOUT_MS,
  );
});
