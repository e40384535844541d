import { afterAll, describe, expect, it } from 'vitest';
import { CREATE_PAYMENT_POINTS } from '../../services/payments/create-payment.flow.ts';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.ts';
import { graphql } from '../support/graphql-client.ts';
import { CREATE_PAYMENT } from '../support/operations.ts';
import { useTestDatabase } from '../support/test-database.ts';
import { TENANT_A, useTestStackOn } from '../support/test-stack.ts';
import { waitUntil } from '../support/wait-until.ts';
import { COMMITTED_PHASES } from '../support/committed-phases.ts';

/**
 * Several gateway processes sweep one database at once. Each stuck request must be claimed by
 * exactly one of them (its fencing token goes 1 → 2, never further) and charged once.
 */
const database = useTestDatabase('fleet');
const STUCK_REQUESTS = 30;
const PROCESSES = 3;
/** Long enough that a claimer always finishes within it; a second claim would mean a bug. */
const LEASE_MS = 4_000;
const stack = useTestStackOn(database, { app: { leaseMs: LEASE_MS } });
let fleet: GatewayProcess[] = [];

afterAll(async () => {
  await Promise.all(fleet.map((p) => p.kill('SIGKILL')));
});

async function scrapeWorkerTakeovers(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const match =
    /idempotency_lease_takeovers_total\{service="payments",operation="createPayment",by="worker"\} (\d+)/.exec(
      text,
    );
  return Number(match?.[1] ?? 0);
}

describe('the recovery worker with several processes sweeping the same table', () => {
  it('claims every stuck request exactly once and charges each once', async () => {
    // Owners that die right before the provider call: admitted, intent committed, no charge.
    stack.app.faults.arm('createPayment.provider_charge.before-call', { kind: 'throw' });
    await Promise.all(
      Array.from({ length: STUCK_REQUESTS }, (_, i) =>
        graphql(stack.app.url, {
          apiKey: TENANT_A.apiKey,
          query: CREATE_PAYMENT,
          variables: {
            input: {
              idempotencyKey: `stuck-${i}`,
              amount: '3.00',
              currency: 'EUR',
              paymentMethod: 'pm_card_visa',
              reference: `stuck-${i}`,
            },
          },
        }),
      ),
    );
    const { rows: seeded } = await stack.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM idempotency_keys WHERE state = 'started'`,
    );
    expect(seeded[0]?.n).toBe(STUCK_REQUESTS);
    expect(stack.sandbox.attempts()).toBe(0);

    fleet = await Promise.all(
      Array.from({ length: PROCESSES }, () =>
        startGatewayProcess({
          databaseUrl: database.url,
          pspUrl: stack.sandbox.url,
          env: { LEASE_MS: String(LEASE_MS), RECOVERY_INTERVAL_MS: '50' },
        }),
      ),
    );
    await waitUntil(
      async () => {
        const { rows } = await stack.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM idempotency_keys WHERE state <> 'finished'`,
        );
        return rows[0]?.n === 0;
      },
      { timeoutMs: 30_000, intervalMs: 100, what: 'every stuck request to be recovered' },
    );

    const { rows: tokens } = await stack.db.query<{ fencing_token: string; n: number }>(
      `SELECT fencing_token, count(*)::int AS n FROM idempotency_keys GROUP BY fencing_token`,
    );
    expect(tokens).toEqual([{ fencing_token: '2', n: STUCK_REQUESTS }]);
    for (let i = 0; i < STUCK_REQUESTS; i++)
      expect(stack.sandbox.charges({ reference: `stuck-${i}` })).toHaveLength(1);
    const { rows: phases } = await stack.db.query<{ recovery_point: string; n: number }>(
      `SELECT recovery_point, count(*)::int AS n FROM ${COMMITTED_PHASES}
        GROUP BY recovery_point ORDER BY recovery_point`,
    );
    expect(phases).toEqual([
      { recovery_point: CREATE_PAYMENT_POINTS.finished, n: STUCK_REQUESTS },
      { recovery_point: CREATE_PAYMENT_POINTS.chargeSent, n: STUCK_REQUESTS },
    ]);
    const takeovers = await Promise.all(fleet.map((p) => scrapeWorkerTakeovers(p.url)));
    expect(takeovers.reduce((a, b) => a + b, 0)).toBe(STUCK_REQUESTS);
  });
});
