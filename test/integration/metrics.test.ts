import { describe, expect, it } from 'vitest';
import { readReplication } from '../../lib/db/replication.ts';
import { createLibMetrics, createMetricsRegistry, registerFleetGauges } from '../../lib/metrics.ts';
import { drainOutbox } from '../support/event-log.ts';
import { errorCodeOf, paymentOf } from '../support/graphql-client.ts';
import { createPaymentOn, keyRowOf, paymentInput, useTestStack } from '../support/test-stack.ts';
import { waitUntil } from '../support/wait-until.ts';

const stack = useTestStack('metrics');

/** Every sample of the scrape, by its exact series text (`name{labels}`). */
async function scrape(): Promise<Map<string, number>> {
  const text = await (await fetch(`${stack.app.url}/metrics`)).text();
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    samples.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return samples;
}

function delta(before: Map<string, number>, after: Map<string, number>, series: string): number {
  return (after.get(series) ?? 0) - (before.get(series) ?? 0);
}

const payments = (name: string, labels: string) =>
  `${name}{service="payments",operation="createPayment"${labels}}`;

describe('the idempotency counters count each decision once, where it is made', () => {
  it('executed, replayed, key_reused, invalid_key, in_use; replays and conflicts by reason', async () => {
    const before = await scrape();
    await createPaymentOn(stack, paymentInput('m-1'));
    await createPaymentOn(stack, paymentInput('m-1'));
    await createPaymentOn(stack, paymentInput('m-1'));
    expect(errorCodeOf(await createPaymentOn(stack, paymentInput('m-1', { amount: '2.00' })))).toBe(
      'IDEMPOTENCY_KEY_REUSED',
    );
    expect(errorCodeOf(await createPaymentOn(stack, paymentInput('bad key!')))).toBe(
      'IDEMPOTENCY_KEY_INVALID',
    );
    // In flight: a slow charge, and a duplicate while it runs.
    const slow = createPaymentOn(stack, paymentInput('m-slow', { paymentMethod: 'pm_card_slow' }));
    await waitUntil(async () => (await keyRowOf(stack.db, 'm-slow'))?.['state'] === 'started', {
      timeoutMs: 5_000,
      intervalMs: 20,
      what: 'the slow charge to be admitted',
    });
    expect(
      errorCodeOf(
        await createPaymentOn(stack, paymentInput('m-slow', { paymentMethod: 'pm_card_slow' })),
      ),
    ).toBe('IDEMPOTENCY_KEY_IN_USE');
    await slow;
    const after = await scrape();

    const outcome = (o: string) => payments('idempotency_requests_total', `,outcome="${o}"`);
    expect(delta(before, after, outcome('executed'))).toBe(2);
    expect(delta(before, after, outcome('replayed'))).toBe(2);
    expect(delta(before, after, outcome('key_reused'))).toBe(1);
    expect(delta(before, after, outcome('invalid_key'))).toBe(1);
    expect(delta(before, after, outcome('in_use'))).toBe(1);
    expect(delta(before, after, payments('idempotency_replays_total', ''))).toBe(2);
    const conflicts = (r: string) => payments('idempotency_conflicts_total', `,reason="${r}"`);
    expect(delta(before, after, conflicts('different_request'))).toBe(1);
    expect(delta(before, after, conflicts('in_progress'))).toBe(1);
    const provider = (o: string) =>
      `provider_calls_total{service="provider",operation="createPayment",outcome="${o}"}`;
    expect(delta(before, after, provider('approved'))).toBe(2);
    expect(
      delta(
        before,
        after,
        'provider_call_duration_seconds_count{service="provider",operation="createPayment"}',
      ),
    ).toBe(2);
    expect(
      delta(
        before,
        after,
        'graphql_request_duration_seconds_count{service="gateway",operation="createPayment"}',
      ),
    ).toBe(7);
  });

  it('has every series from the start, at zero, so the first event shows in a rate', async () => {
    const samples = await scrape();
    expect(samples.get(payments('idempotency_expired_retries_total', ''))).toBe(0);
    expect(
      samples.get(
        'idempotency_lease_takeovers_total{service="payments",operation="refundPayment",by="worker"}',
      ),
    ).toBe(0);
    expect(
      samples.get(
        'outbox_deliveries_total{service="notifications",consumer="webhook",outcome="failed"}',
      ),
    ).toBe(0);
    // This stack's recovery worker never sweeps: the gauge says so, as its help promises.
    expect(
      samples.get('idempotency_recovery_last_sweep_timestamp_seconds{service="gateway"}'),
    ).toBe(0);
  });

  it('never puts a key, a tenant or a payment id in a label', async () => {
    const payment = paymentOf(await createPaymentOn(stack, paymentInput('m-secret-key-1')));
    const text = await (await fetch(`${stack.app.url}/metrics`)).text();
    for (const value of ['m-secret-key-1', payment.id, stack.tenantIds.a, stack.tenantIds.b]) {
      expect(text).not.toContain(value);
    }
  });
});

describe('the fleet gauges and the outbox', () => {
  it('reads the backlog from the database, counts deliveries and ledger postings', async () => {
    // The test stack runs no dispatcher: deliveries stay pending until dispatched by hand.
    const before = await scrape();
    await createPaymentOn(stack, paymentInput('m-outbox'));
    const pending = await scrape();
    expect(
      pending.get('outbox_backlog_events{service="ledger",consumer="ledger"}'),
    ).toBeGreaterThan(0);
    expect(
      pending.get('outbox_oldest_pending_age_seconds{service="ledger",consumer="ledger"}'),
    ).toBeGreaterThanOrEqual(0);

    await drainOutbox(stack.db, [stack.app.services.dispatcher]);
    const after = await scrape();
    expect(after.get('outbox_backlog_events{service="ledger",consumer="ledger"}')).toBe(0);
    const ledgerDelivered =
      'outbox_deliveries_total{service="ledger",consumer="ledger",outcome="delivered"}';
    expect(delta(before, after, ledgerDelivered)).toBeGreaterThanOrEqual(1);
    expect(
      delta(before, after, 'ledger_postings_total{service="ledger",kind="capture"}'),
    ).toBeGreaterThanOrEqual(1);

    // A redelivered movement posts nothing: the counter counts postings, not deliveries.
    const { rows } = await stack.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ledger_postings`,
    );
    expect(after.get('ledger_postings_total{service="ledger",kind="capture"}')).toBe(rows[0]!.n);
  });

  it('stamps the last sweep of the recovery worker', async () => {
    const before = Date.now() / 1000;
    await stack.app.services.worker.sweepOnce();
    const samples = await scrape();
    expect(
      samples.get('idempotency_recovery_last_sweep_timestamp_seconds{service="gateway"}'),
    ).toBeGreaterThanOrEqual(Math.floor(before));
  });
});

/**
 * The test database is a single node: no standby, and a superuser role. The test against a real
 * synchronous standby belongs with the failover tests, on test/support/ha-formation.ts's
 * formation: 1, then 0 once the standby's node is killed (killNode), then 1 again after runNode
 * and its catch-up; and 0 throughout with `startFormation({ async: true })`.
 */
describe('the replication gauges', () => {
  it('read no synchronous standby on a single node, through /metrics', async () => {
    const samples = await scrape();
    expect(samples.get('payments_db_synchronous_standbys{service="gateway"}')).toBe(0);
    expect(samples.get('payments_db_standbys{service="gateway"}')).toBe(0);
    expect(samples.get('payments_db_replication_visible{service="gateway"}')).toBe(1);
  });

  it('never count blind: a role that cannot see sync states reports no count, and says so', async () => {
    // Predefined roles, so the test creates none in the shared cluster: pg_signal_backend has
    // no pg_read_all_stats privileges (sync_state reads NULL to it); pg_monitor has them.
    const client = await stack.db.connect();
    try {
      await client.query('SET ROLE pg_signal_backend');
      expect(await readReplication(client)).toEqual({
        visible: false,
        standbys: 0,
        synchronous: null,
      });
      const metrics = createLibMetrics(createMetricsRegistry({ defaultMetrics: false }));
      registerFleetGauges(
        metrics,
        {
          unfinished: () => Promise.resolve([]),
          outbox: () => Promise.resolve([]),
          replication: () => readReplication(client),
        },
        'gateway',
      );
      const text = await metrics.registry.metrics();
      expect(text).toContain('payments_db_replication_visible{service="gateway"} 0');
      expect(text).toContain('payments_db_standbys{service="gateway"} 0');
      expect(text).not.toMatch(/^payments_db_synchronous_standbys\{/m);

      await client.query('SET ROLE pg_monitor');
      expect(await readReplication(client)).toEqual({
        visible: true,
        standbys: 0,
        synchronous: 0,
      });
    } finally {
      await client.query('RESET ROLE');
      client.release();
    }
  });
});
