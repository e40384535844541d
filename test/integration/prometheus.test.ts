import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { dashboardTargets } from '../../grafana/dashboard-queries.ts';
import { findFreePort } from '../../dev/embedded-postgres/database-server.ts';
import { errorCodeOf, graphql, paymentOf, type GraphQLAnswer } from '../support/graphql-client.ts';
import {
  startPrometheus,
  type Prometheus,
  type QueryAnswer,
} from '../support/prometheus-server.ts';
import {
  createPaymentOn,
  keyRowOf,
  paymentInput,
  TENANT_A,
  useTestStack,
} from '../support/test-stack.ts';
import {
  CAPTURE_PAYMENT as CAPTURE,
  REFUND_PAYMENT as REFUND,
  REGISTER_WEBHOOK_ENDPOINT as REGISTER,
} from '../support/operations.ts';
import { waitUntil } from '../support/wait-until.ts';

/**
 * The dashboards and alert rules against a real Prometheus scraping a running gateway. A panel
 * whose query matches no series shows "No data" in Grafana and an alert whose expression never
 * matches never fires; neither fails anywhere else (promtool only parses the panels, and its
 * rule tests feed series we wrote by hand, with the names and labels we believed the code
 * exports). Here the series are the gateway's own, after traffic that takes every path the
 * panels and alerts watch: replays, conflicts of both kinds, a slow provider, declines, a
 * provider timeout that ends as an unknown outcome, captures, refunds and a failing webhook.
 */
const RULES_FILE = fileURLToPath(
  new URL('../../grafana/alerts/payments.rules.yml', import.meta.url),
);
/** Calls and probes for pm_card_unknown hang: each attempt costs a call and a probe timeout. */
const PROVIDER_TIMEOUT_MS = 800;
/** pm_card_slow answers within the provider timeout: a slow provider, not a timed-out one. */
const SLOW_MS = 400;
/** Hit by a payment just before it charges, after its admission has committed. */
const CHARGE_POINT = 'createPayment.provider_charge.before-call';
/**
 * Longer than one attempt (a call and a probe, twice the provider timeout), so the recovery
 * worker never takes a request from an owner still working on it; short, so a request whose
 * owner is gone is resumed within seconds.
 */
const LEASE_MS = 3_000;
/** Outlasts the test: the unknown payment's charge stays hidden from calls and probes. */
const BLACKHOLE_MS = 10 * 60_000;
/** Timed-out attempts before a request is unknown: two, so the worker's retry makes it one. */
const UNKNOWN_AFTER_ATTEMPTS = 2;
/**
 * IdempotencyKeyReuseSurge needs over 0.1/s over 5 minutes: more than 30 reuses inside the
 * window, whatever the test's own length. 45 leaves room for rate()'s extrapolation.
 */
const KEY_REUSES = 45;
/** ProviderTimeoutRateHigh ignores operations with fewer than 20 provider calls in 5 minutes. */
const APPROVED_PAYMENTS = 20;
/**
 * Grafana's variables. 1m is what $__rate_interval is at the provisioned 15 s scrape interval
 * (four scrapes), and long enough to still cover the traffic when the queries run.
 */
const GRAFANA_VARIABLES: Readonly<Record<string, string>> = {
  operation: 'createPayment',
  __rate_interval: '1m',
  __interval: '15s',
  __range: '5m',
};
/**
 * Data arrives within a few 1 s scrapes and evaluations; a query still empty after this has
 * nothing to show, however long we wait. Two waits fit in vitest's 60 s per test.
 */
const DATA_TIMEOUT_MS = 20_000;

/**
 * What the test expects of each alert of payments.rules.yml. `pending`: its expression is true
 * after the traffic, so the alert is pending (every `for:` is minutes long; pending is what
 * shows in seconds). Otherwise why it cannot be true here, and `signals`: the series its
 * expression compares, which must hold data so the alert could fire once the condition lasts.
 */
type AlertExpectation = { pending: true } | { pending: false; why: string; signals: string[] };

const ALERTS: Readonly<Record<string, AlertExpectation>> = {
  IdempotencyUnknownOutcomes: { pending: true },
  IdempotencyKeyReuseSurge: { pending: true },
  ProviderTimeoutRateHigh: { pending: true },
  IdempotencyRequestStuck: {
    pending: false,
    why:
      'needs a request unfinished for over 90 s that is not an unknown outcome: more than the ' +
      'minute this test may spend (the 90 s are fixed in the rule, three default leases, and ' +
      'do not follow the short lease used here)',
    signals: [
      'max by (operation) (idempotency_in_progress_age_max_seconds)',
      'max by (operation) (idempotency_unknown_outcomes)',
    ],
  },
  OutboxDeliveryLagging: {
    pending: false,
    why: 'needs a delivery pending for over 5 minutes; the failing webhook only gets seconds',
    signals: ['max by (consumer) (outbox_oldest_pending_age_seconds{consumer="webhook"})'],
  },
  IdempotencyPartitionsRunningOut: {
    pending: false,
    why:
      'needs partition maintenance to fail for half a day; here it ran at start, and the ' +
      "partitions reach a day past a new key's expiry",
    signals: [
      'max(idempotency_partitions_insertable_until_timestamp_seconds) - time()',
      'max(idempotency_partitions_slack_seconds)',
    ],
  },
  OutboxRetentionBehind: {
    pending: false,
    why:
      'needs six hours of runs none of which completes; here the series exist (each result ' +
      'starts at 0) and no run has spent its budget or failed',
    signals: [
      'sum(outbox_retention_runs_total{result="complete"})',
      'sum(outbox_retention_runs_total{result=~"budget_spent|error"}) == 0',
    ],
  },
  RecoveryWorkerNotSweeping: {
    pending: false,
    why:
      'needs 5 minutes without a sweep, and the worker sweeps here; it must stay quiet while ' +
      'the worker sweeps',
    signals: [
      'sum(increase(idempotency_recovery_sweeps_total{result!="error"}[5m])) > 0',
      'time() - max by (service, instance) (idempotency_recovery_last_sweep_timestamp_seconds > 0)',
    ],
  },
  DatabaseSynchronousStandbyLost: {
    pending: false,
    why:
      'needs a synchronous standby, then its loss; the test database is a single node, whose ' +
      'count of 0 must read as "never had one"',
    signals: [
      'max(payments_db_synchronous_standbys) == 0',
      'max(max_over_time(payments_db_synchronous_standbys[7d]))',
    ],
  },
  DatabaseReplicationStateHidden: {
    pending: false,
    why: 'needs a role without pg_monitor and a standby; the test role is a superuser',
    signals: ['min(payments_db_replication_visible) == 1', 'max(payments_db_standbys) == 0'],
  },
};

/**
 * What the traffic did, as Prometheus sees it. Most panels read counters that start at zero
 * (so that the first event shows in a rate), which gives them data before anything happens:
 * these make sure the paths were really taken.
 */
const TRAFFIC_SEEN = [
  'sum(increase(idempotency_replays_total{operation="createPayment"}[5m])) > 0',
  'sum(increase(idempotency_conflicts_total{reason="different_request"}[5m])) > 30',
  'sum(increase(idempotency_conflicts_total{reason="in_progress"}[5m])) > 0',
  'sum(increase(idempotency_requests_total{outcome="invalid_key"}[5m])) > 0',
  'sum(increase(provider_calls_total{operation="createPayment", outcome="declined"}[5m])) > 0',
  'sum(increase(provider_calls_total{operation="createPayment", outcome="timeout"}[5m])) > 0',
  'sum(increase(provider_calls_total{operation="createPayment", outcome="probe_missing"}[5m])) > 0',
  'histogram_quantile(0.99, sum by (le) (rate(provider_call_duration_seconds_bucket[5m]))) > 0.25',
  'sum(increase(idempotency_lease_takeovers_total{by="worker"}[5m])) > 0',
  'sum(increase(ledger_postings_total{kind="capture"}[5m])) > 0',
  'sum(increase(ledger_postings_total{kind="refund"}[5m])) > 0',
  'sum(increase(outbox_deliveries_total{consumer="ledger", outcome="delivered"}[5m])) > 0',
  'sum(increase(outbox_deliveries_total{consumer="webhook", outcome="failed"}[5m])) > 0',
  'max(outbox_backlog_events{consumer="webhook"}) > 0',
  'max(idempotency_unknown_outcomes{operation="createPayment"}) > 0',
];

const stack = useTestStack('prometheus', {
  sandbox: { slowMs: SLOW_MS, blackholeMs: BLACKHOLE_MS },
  app: {
    startRecoveryWorker: true, // and the outbox dispatcher, reconciliation and retention
    recoveryIntervalMs: 200,
    outboxIntervalMs: 100,
    leaseMs: LEASE_MS,
    providerTimeoutMs: PROVIDER_TIMEOUT_MS,
    unknownAfterAttempts: UNKNOWN_AFTER_ATTEMPTS,
    backoffBaseMs: 100,
    // Reconciliation would settle the unknown payment (its job) and take the gauge back to
    // zero; its first run must come after the test, not during Prometheus' scrapes.
    reconciliationIntervalMs: 10 * 60_000,
  },
});
let prometheus: Prometheus | undefined;

beforeAll(async () => {
  prometheus = await startPrometheus({
    target: new URL(stack.app.url).host,
    ruleFiles: [RULES_FILE],
  });
  // Counters start at zero so that rate() sees their first increment; that only works if
  // Prometheus has scraped the zero before the traffic starts.
  const unscraped = await untilData(prometheus, ['up{job="payments-gateway"} == 1']);
  if (unscraped.length > 0) {
    throw new Error(`prometheus never scraped the gateway:\n${prometheus.log()}`);
  }
  await generateTraffic();
}, 120_000);

afterAll(async () => {
  await prometheus?.stop();
});

const gql = (query: string, input: Record<string, unknown>) =>
  graphql(stack.app.url, { apiKey: TENANT_A.apiKey, query, variables: { input } });

function expectCode(answer: GraphQLAnswer, code: string): void {
  expect(errorCodeOf(answer), JSON.stringify(answer.body)).toBe(code);
}

async function generateTraffic(): Promise<void> {
  // A merchant endpoint nobody listens on: every webhook delivery fails and is retried with
  // backoff, so the webhook backlog and its failures stay visible (outbox panels, alert signal).
  const closedPort = await findFreePort();
  const hook = await gql(REGISTER, {
    idempotencyKey: 'prom-hook',
    url: `http://127.0.0.1:${closedPort}/hooks`,
  });
  expect(hook.body.errors).toBeUndefined();

  // The unknown outcome first, since it takes longest: the charge is made but calls and probes
  // hang, the client gets OUTCOME_PENDING after one attempt, and the recovery worker's second
  // attempt times out too, which makes the request unknown.
  const unknown = createPaymentOn(
    stack,
    paymentInput('prom-unknown', { paymentMethod: 'pm_card_unknown' }),
  );

  const approved: string[] = [];
  for (let i = 0; i < APPROVED_PAYMENTS; i++) {
    approved.push(paymentOf(await createPaymentOn(stack, paymentInput(`prom-ok-${i}`))).id);
  }
  for (let i = 0; i < 5; i++) {
    const replay = await createPaymentOn(stack, paymentInput(`prom-ok-${i}`));
    expect(replay.body.extensions).toEqual({ idempotency: { replayed: true } });
  }
  for (let i = 0; i < KEY_REUSES; i++) {
    const reuse = paymentInput('prom-ok-0', { amount: `${i + 1}.01` });
    expectCode(await createPaymentOn(stack, reuse), 'IDEMPOTENCY_KEY_REUSED');
  }
  expectCode(await createPaymentOn(stack, paymentInput('not a key!')), 'IDEMPOTENCY_KEY_INVALID');
  for (let i = 0; i < 3; i++) {
    // A duplicate while the slow original is still in flight. It is sent once the original
    // holds the key: sent on a timer instead, a loaded machine could let the duplicate in
    // first, and the two would swap roles. The original's charge waits for the duplicate's
    // answer: a duplicate that read the key after the payment finished would be a replay.
    const key = `prom-slow-${i}`;
    const input = paymentInput(key, { paymentMethod: 'pm_card_slow' });
    let duplicateAnswered = false;
    stack.app.faults.arm(CHARGE_POINT, {
      kind: 'call',
      run: () => until(() => Promise.resolve(duplicateAnswered), `${key}'s duplicate answered`),
    });
    try {
      const original = createPaymentOn(stack, input);
      await until(async () => (await keyRowOf(stack.db, key)) !== undefined, `${key} admitted`);
      const duplicate = await createPaymentOn(stack, input);
      duplicateAnswered = true;
      expectCode(duplicate, 'IDEMPOTENCY_KEY_IN_USE');
      expect(paymentOf(await original).status).toBe('SUCCEEDED');
    } finally {
      stack.app.faults.disarm(CHARGE_POINT);
    }
  }
  for (let i = 0; i < 3; i++) {
    const declined = paymentInput(`prom-declined-${i}`, { paymentMethod: 'pm_card_declined' });
    expect(paymentOf(await createPaymentOn(stack, declined)).failureCode).toBe('CARD_DECLINED');
  }
  for (let i = 0; i < 2; i++) {
    // The first call times out without effect; the probe finds nothing and the re-call succeeds.
    const input = paymentInput(`prom-timeout-${i}`, { paymentMethod: 'pm_card_timeout' });
    expect(paymentOf(await createPaymentOn(stack, input)).status).toBe('SUCCEEDED');
  }
  for (let i = 0; i < 3; i++) {
    const manual = paymentInput(`prom-manual-${i}`, { captureMethod: 'MANUAL' });
    const payment = paymentOf(await createPaymentOn(stack, manual));
    const captured = await gql(CAPTURE, { idempotencyKey: `prom-cap-${i}`, paymentId: payment.id });
    expect(captured.body.errors, JSON.stringify(captured.body)).toBeUndefined();
  }
  for (const [i, paymentId] of approved.slice(0, 3).entries()) {
    const refunded = await gql(REFUND, {
      idempotencyKey: `prom-ref-${i}`,
      paymentId,
      amount: '4.00',
    });
    expect(refunded.body.errors, JSON.stringify(refunded.body)).toBeUndefined();
  }

  expectCode(await unknown, 'OUTCOME_PENDING');
  await until(
    async () => (await keyRowOf(stack.db, 'prom-unknown'))?.state === 'unknown',
    'the recovery worker makes prom-unknown an unknown outcome',
  );
}

/** Polls the database-side condition of a traffic step (a few seconds at most). */
async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  await waitUntil(condition, { timeoutMs: 20_000, intervalMs: 20, what });
}

/** Grafana's variables replaced by values; an unknown one fails rather than querying `$x`. */
function withVariables(expr: string): string {
  return expr.replace(/\$\{?(\w+)\}?/g, (match, name: string) => {
    const value = GRAFANA_VARIABLES[name];
    if (value === undefined) throw new Error(`no value for Grafana variable ${match} in ${expr}`);
    return value;
  });
}

/** A sample Grafana can draw: NaN (e.g. a quantile of no requests) shows as nothing. */
const hasData = (answer: QueryAnswer) =>
  answer.ok && answer.samples.some((sample) => Number.isFinite(Number(sample.value[1])));

/**
 * Polls every query until each has data, or the time is up. Returns the ones that never had
 * any, with Prometheus' last answer, so one run lists every empty panel at once.
 */
async function untilData(
  server: Prometheus,
  exprs: string[],
): Promise<Array<{ expr: string; last: QueryAnswer }>> {
  let waiting: Array<{ expr: string; last: QueryAnswer }> = exprs.map((expr) => ({
    expr,
    last: { ok: true, samples: [] },
  }));
  const deadline = Date.now() + DATA_TIMEOUT_MS;
  for (;;) {
    for (const entry of waiting) entry.last = await server.query(entry.expr);
    waiting = waiting.filter((entry) => !hasData(entry.last));
    if (waiting.length === 0 || Date.now() > deadline) return waiting;
    await sleep(1_000);
  }
}

const running = (): Prometheus => {
  if (prometheus === undefined) throw new Error('prometheus did not start');
  return prometheus;
};

const alertRulesSchema = z.object({
  groups: z.array(z.object({ rules: z.array(z.object({ alert: z.string(), expr: z.string() })) })),
});

async function alertRules(): Promise<Array<{ alert: string; expr: string }>> {
  const file = alertRulesSchema.parse(parse(await readFile(RULES_FILE, 'utf8')));
  return file.groups.flatMap((group) => group.rules);
}

describe('a real Prometheus scraping the gateway after mixed traffic', () => {
  it('sees the traffic take every path the panels and alerts watch', async () => {
    expect(await untilData(running(), TRAFFIC_SEEN)).toEqual([]);
  });

  it('has data for every query of both dashboards', async () => {
    const targets = await dashboardTargets();
    expect(targets.length).toBeGreaterThan(0);
    const empty = await untilData(
      running(),
      targets.map((target) => withVariables(target.expr)),
    );
    const panelOf = new Map(
      targets.map((t) => [withVariables(t.expr), `${t.file} "${t.panel}"`] as const),
    );
    expect(empty.map((entry) => ({ panel: panelOf.get(entry.expr), ...entry }))).toEqual([]);

    // A legend naming a label the series do not carry renders as an empty string: lines that
    // cannot be told apart. Every `{{label}}` must be on every series the query returns.
    const unlabelled: string[] = [];
    for (const target of targets) {
      const answer = await running().query(withVariables(target.expr));
      const labels = [...target.legend.matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1] ?? '');
      for (const sample of answer.ok ? answer.samples : []) {
        for (const label of labels.filter((name) => sample.metric[name] === undefined)) {
          unlabelled.push(
            `${target.file} "${target.panel}": {{${label}}} on ${JSON.stringify(sample.metric)}`,
          );
        }
      }
    }
    expect([...new Set(unlabelled)]).toEqual([]);
  });

  it('lists createPayment in the operation dashboard variable', async () => {
    const values = await running().labelValues('operation', 'idempotency_requests_total');
    expect(values).toContain('createPayment');
  });

  it('evaluates every alert rule without error', async () => {
    const rules = await alertRules();
    expect(Object.keys(ALERTS).sort(), 'every alert has an expectation here').toEqual(
      rules.map((rule) => rule.alert).sort(),
    );
    const deadline = Date.now() + DATA_TIMEOUT_MS;
    let states = await running().rules();
    while (states.some((rule) => rule.health === 'unknown') && Date.now() < deadline) {
      await sleep(500);
      states = await running().rules();
    }
    expect(
      states.map((rule) => ({ name: rule.name, health: rule.health, error: rule.lastError ?? '' })),
    ).toEqual(rules.map((rule) => ({ name: rule.alert, health: 'ok', error: '' })));
    for (const rule of rules) {
      const answer = await running().query(rule.expr);
      expect(answer.ok ? '' : answer.error, rule.alert).toBe('');
    }
  });

  it('makes the expressions of the expected alerts true, and those alerts pending', async () => {
    const rules = await alertRules();
    const expected = rules.filter((rule) => ALERTS[rule.alert]?.pending === true);
    const exprs = expected.map((rule) => rule.expr);
    expect(await untilData(running(), exprs)).toEqual([]);

    // Pending: the expression is true and the rule's `for:` (minutes, kept as shipped) is
    // running. Firing would need the test to last that long.
    const names = expected.map((rule) => rule.alert).sort();
    const deadline = Date.now() + DATA_TIMEOUT_MS;
    let active = await running().alerts();
    const activeNames = () => new Set(active.map((alert) => alert.labels['alertname']));
    while (!names.every((name) => activeNames().has(name)) && Date.now() < deadline) {
      await sleep(500);
      active = await running().alerts();
    }
    const seen = active
      .filter((alert) => names.includes(alert.labels['alertname'] ?? ''))
      .map((alert) => ({
        alert: alert.labels['alertname'],
        operation: alert.labels['operation'],
        state: alert.state,
      }))
      .sort((a, b) => String(a.alert).localeCompare(String(b.alert)));
    // createPayment is the only operation with unknown outcomes, reuses and timeouts.
    expect(seen).toEqual(
      names.map((alert) => ({
        alert,
        operation: 'createPayment',
        state: expect.stringMatching(/^(pending|firing)$/) as unknown,
      })),
    );
  });

  it('has data behind every other alert, and leaves those alerts quiet', async () => {
    const signals: Array<{ alert: string; why: string; expr: string }> = [];
    for (const [alert, expectation] of Object.entries(ALERTS)) {
      if (expectation.pending) continue;
      const { why } = expectation;
      signals.push(...expectation.signals.map((expr) => ({ alert, why, expr })));
    }
    const exprs = signals.map(({ expr }) => expr);
    const empty = new Set((await untilData(running(), exprs)).map(({ expr }) => expr));
    const missing = signals.filter(({ expr }) => empty.has(expr));
    expect(missing.map(({ alert, why, expr }) => `${alert} (${why}): ${expr}`)).toEqual([]);

    const quiet = new Set(signals.map(({ alert }) => alert));
    const active = (await running().alerts()).map((alert) => alert.labels['alertname'] ?? '');
    expect(active.filter((name) => quiet.has(name))).toEqual([]);
  });
});
