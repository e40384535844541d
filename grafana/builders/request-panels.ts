/**
 * Panels about idempotent requests and their provider calls, for any scope: the overview shows
 * them for the whole fleet, the drill-down for the operation picked in its `operation` variable.
 *
 * The in-progress, stale-lease and unknown-outcome gauges are read from the database by every
 * process at scrape time, so each process reports the same fleet-wide number: they are combined
 * with `max by`, never `sum by`, which would multiply them by the number of processes.
 */
import type { PanelSpec } from './panels.ts';
import { quantile, rate, select, type Scope } from './promql.ts';
import { RUNBOOK } from './runbooks.ts';

/** The recovery lease (LEASE_MS, default 30 s); the stuck-request alert fires at three. */
const LEASE_SECONDS = 30;

export function requestsByOutcome(scope: Scope): PanelSpec {
  return {
    title: 'Requests by outcome',
    description:
      'Idempotent mutations per second by how admission decided them. executed is new work; ' +
      'replayed answered from a stored result. A rise in key_reused or in_use is client retry ' +
      'behaviour (see the conflicts panel); invalid_key is clients sending malformed keys. ' +
      'A fall to zero while clients are sending means requests are not reaching the gateway.',
    runbook: RUNBOOK.keyReuseSurge,
    unit: 'reqps',
    queries: [
      {
        expr: `sum by (outcome) (${rate(select('idempotency_requests_total', scope))})`,
        legend: '{{outcome}}',
      },
    ],
    thresholds: [],
  };
}

export function graphqlLatency(scope: Scope): PanelSpec {
  const buckets = { selector: select('graphql_request_duration_seconds_bucket', scope), by: [] };
  return {
    title: 'GraphQL latency',
    description:
      'p50/p95/p99 of GraphQL request duration. Red (p99 over 2.5 s): compare with provider ' +
      'latency; if the provider is slow, follow the provider runbook, otherwise check event ' +
      'loop lag and CPU (saturation) and the database.',
    runbook: RUNBOOK.saturation,
    unit: 's',
    queries: [0.5, 0.95, 0.99].map((q) => ({
      expr: quantile(q, buckets),
      legend: `p${Math.round(q * 100)}`,
    })),
    thresholds: [
      { value: 1, color: 'yellow' },
      { value: 2.5, color: 'red' },
    ],
  };
}

export function replays(scope: Scope): PanelSpec {
  return {
    title: 'Replays',
    description:
      'Requests answered from a stored result: clients retrying after a lost response. ' +
      'Harmless in itself; a sudden surge with no rise in errors is a client retry storm.',
    runbook: RUNBOOK.keyReuseSurge,
    unit: 'reqps',
    queries: [
      {
        expr: `sum by (operation) (${rate(select('idempotency_replays_total', scope))})`,
        legend: '{{operation}}',
      },
    ],
    thresholds: [],
  };
}

export function conflicts(scope: Scope): PanelSpec {
  return {
    title: 'Conflicts by reason',
    description:
      'Requests refused for their key. different_request: a key reused for another body, a ' +
      'client bug. in_progress: a retry while the first attempt still runs. Red (over 0.1/s): ' +
      'find the client and have it fix its key generation.',
    runbook: RUNBOOK.keyReuseSurge,
    unit: 'reqps',
    queries: [
      {
        expr: `sum by (reason) (${rate(select('idempotency_conflicts_total', scope))})`,
        legend: '{{reason}}',
      },
    ],
    thresholds: [{ value: 0.1, color: 'red' }],
  };
}

export function expiredRetries(scope: Scope): PanelSpec {
  return {
    title: 'Expired retries',
    description:
      'Retries that arrived after the replay window (IDEMPOTENCY_TTL_SECONDS) and ran as new ' +
      'requests: to the client a second payment. Yellow: find the client retrying that late.',
    runbook: RUNBOOK.keyReuseSurge,
    unit: 'reqps',
    queries: [
      {
        expr: `sum by (operation) (${rate(select('idempotency_expired_retries_total', scope))})`,
        legend: '{{operation}}',
      },
    ],
    thresholds: [{ value: 0.001, color: 'yellow' }],
  };
}

export function unknownOutcomes(scope: Scope): PanelSpec {
  return {
    title: 'Unknown outcomes',
    description:
      'Requests whose provider outcome is unknown, awaiting reconciliation: money may or may ' +
      'not have moved. Red (any): list them with `npm run ops -- list --state unknown`, then ' +
      'reconcile; the alert fires after 10 minutes. No data: no unfinished request at all ' +
      '(or the gateway is not scraped, and every panel is empty).',
    runbook: RUNBOOK.unknownOutcomes,
    unit: 'short',
    queries: [
      {
        expr: `sum(max by (operation) (${select('idempotency_unknown_outcomes', scope)}))`,
        legend: 'unknown',
      },
    ],
    thresholds: [{ value: 1, color: 'red' }],
  };
}

export function inProgressAge(scope: Scope): PanelSpec {
  return {
    title: 'Oldest in-progress request',
    description:
      'Age of the oldest started request (unknown outcomes have their own panel). Yellow past ' +
      `one lease (${LEASE_SECONDS} s), red past three (${3 * LEASE_SECONDS} s): nothing is ` +
      'finishing it. Check the recovery worker panels and `npm run ops -- list --state started`.',
    runbook: RUNBOOK.requestStuck,
    unit: 's',
    queries: [
      {
        expr: `max by (operation) (${select('idempotency_in_progress_age_max_seconds', scope)})`,
        legend: '{{operation}}',
      },
    ],
    thresholds: [
      { value: LEASE_SECONDS, color: 'yellow' },
      { value: 3 * LEASE_SECONDS, color: 'red' },
    ],
  };
}

export function staleLeases(scope: Scope): PanelSpec {
  return {
    title: 'Stale leases',
    description:
      'Unfinished requests whose lease ran out under an owner that stopped (crashed, paused or ' +
      'wedged; a live owner renews its lease, and a request released to back off is not ' +
      'counted); the recovery worker ' +
      'should take them over within seconds. Staying red (10 or more): the worker is not ' +
      'keeping up or not running.',
    runbook: RUNBOOK.recoveryNotSweeping,
    unit: 'short',
    queries: [
      {
        expr: `max by (operation) (${select('idempotency_stale_leases', scope)})`,
        legend: '{{operation}}',
      },
    ],
    thresholds: [
      { value: 1, color: 'yellow' },
      { value: 10, color: 'red' },
    ],
  };
}

export function takeovers(scope: Scope): PanelSpec {
  return {
    title: 'Lease takeovers by who',
    description:
      'Expired leases taken over by a client retry or the recovery worker: each one is a ' +
      'process that died or stalled mid-request. Yellow (over 0.05/s): look for crashing or ' +
      'restarting gateway processes.',
    runbook: RUNBOOK.requestStuck,
    unit: 'ops',
    queries: [
      {
        expr: `sum by (by) (${rate(select('idempotency_lease_takeovers_total', scope))})`,
        legend: '{{by}}',
      },
    ],
    thresholds: [{ value: 0.05, color: 'yellow' }],
  };
}

export function providerOutcomes(scope: Scope): PanelSpec {
  return {
    title: 'Provider calls by outcome',
    description:
      'Calls to the payment provider. timeout and error are drawn red; probe_found and ' +
      'probe_missing are the lookups that follow a timeout. See the timeout ratio panel.',
    runbook: RUNBOOK.providerTimeouts,
    unit: 'reqps',
    queries: [
      {
        expr: `sum by (outcome) (${rate(select('provider_calls_total', scope))})`,
        legend: '{{outcome}}',
      },
    ],
    thresholds: [],
    alarmSeries: '^(timeout|error)$',
  };
}

export function providerTimeoutRatio(scope: Scope): PanelSpec {
  const calls = (extra: string) =>
    `sum by (operation) (${rate(select('provider_calls_total', scope, extra))})`;
  return {
    title: 'Provider timeout ratio',
    description:
      'Share of provider calls that timed out. Each timeout risks an unknown outcome. Red ' +
      '(over 5%): check the provider status page and provider latency; the alert fires after ' +
      '5 minutes.',
    runbook: RUNBOOK.providerTimeouts,
    unit: 'percentunit',
    queries: [{ expr: `${calls('outcome="timeout"')} / ${calls('')}`, legend: '{{operation}}' }],
    thresholds: [
      { value: 0.02, color: 'yellow' },
      { value: 0.05, color: 'red' },
    ],
  };
}

export function providerLatency(scope: Scope): PanelSpec {
  const selector = select('provider_call_duration_seconds_bucket', scope);
  return {
    title: 'Provider latency p95',
    description:
      'p95 of provider call duration, timeouts included. Red at the provider timeout ' +
      '(PROVIDER_TIMEOUT_MS, 5 s by default): calls are timing out.',
    runbook: RUNBOOK.providerTimeouts,
    unit: 's',
    queries: [{ expr: quantile(0.95, { selector, by: ['operation'] }), legend: '{{operation}}' }],
    thresholds: [
      { value: 1, color: 'yellow' },
      { value: 5, color: 'red' },
    ],
  };
}
