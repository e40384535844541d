/**
 * Panels with no `operation` label: the recovery worker, retention, the outbox, the ledger, the
 * database's standbys and the processes themselves. Only the overview shows them.
 */
import type { PanelSpec } from './panels.ts';
import { rate } from './promql.ts';
import { RUNBOOK } from './runbooks.ts';

export function recoverySweeps(): PanelSpec {
  return {
    title: 'Recovery sweeps by result',
    description:
      'Sweeps of the recovery worker (every RECOVERY_INTERVAL_MS, 5 s by default). claimed ' +
      'found work, empty found none, error (red) failed, usually on the database. All lines ' +
      'at zero: no worker is sweeping.',
    runbook: RUNBOOK.recoveryNotSweeping,
    unit: 'ops',
    queries: [
      {
        expr: `sum by (result) (${rate('idempotency_recovery_sweeps_total')})`,
        legend: '{{result}}',
      },
    ],
    thresholds: [],
    alarmSeries: '^error$',
  };
}

export function secondsSinceLastSweep(): PanelSpec {
  return {
    title: 'Seconds since last sweep',
    description:
      'Per process, time since its recovery worker last completed a sweep (processes that ' +
      'never swept are not shown). Red past 5 minutes: that worker is stuck; restart the ' +
      'process.',
    runbook: RUNBOOK.recoveryNotSweeping,
    unit: 's',
    queries: [
      {
        expr:
          'time() - max by (service, instance) ' +
          '(idempotency_recovery_last_sweep_timestamp_seconds > 0)',
        legend: '{{service}} {{instance}}',
      },
    ],
    thresholds: [
      { value: 30, color: 'yellow' },
      { value: 300, color: 'red' },
    ],
  };
}

export function retentionRuns(): PanelSpec {
  return {
    title: 'Retention runs by result',
    description:
      'Runs of the idempotency partition maintenance job. error (red): the job failed. ' +
      'Expired idempotency records are not being dropped, so storage grows, and no partitions ' +
      'are made for new keys: once the slack is used up (a day with daily partitions) every ' +
      'admission fails (IdempotencyPartitionsRunningOut pages with half of it left). Check the ' +
      'gateway logs for ' +
      'the job and the database (disk, locks).',
    runbook: RUNBOOK.partitionsRunningOut,
    unit: 'ops',
    queries: [
      {
        expr: `sum by (result) (${rate('idempotency_retention_runs_total')})`,
        legend: '{{result}}',
      },
    ],
    thresholds: [],
    alarmSeries: '^error$',
  };
}

/**
 * How long new keys still have a partition to land in, as a share of the slack maintenance
 * keeps: 100% and more is normal, below 50% IdempotencyPartitionsRunningOut fires.
 */
export function partitionRunway(): PanelSpec {
  return {
    title: 'Partition runway',
    description:
      'How much longer new idempotency keys have a partition to land in, as a share of the ' +
      'slack partition maintenance keeps (idempotency_partitions_slack_seconds: a day with ' +
      'daily partitions). 100% or more is normal, since every run tops it up. Yellow below ' +
      '90%: maintenance has missed runs. Red below 50%: IdempotencyPartitionsRunningOut has ' +
      'fired, and at 0% every admission fails. Find why the job fails (Retention runs by ' +
      'result), fix it, then restart one gateway: it runs maintenance at start.',
    runbook: RUNBOOK.partitionsRunningOut,
    unit: 'percentunit',
    queries: [
      {
        expr:
          '(max(idempotency_partitions_insertable_until_timestamp_seconds) - time()) ' +
          '/ max(idempotency_partitions_slack_seconds)',
        legend: 'runway',
      },
    ],
    thresholds: [
      { value: 0.5, color: 'red' },
      { value: 0.9, color: 'yellow' },
    ],
    lowIsBad: true,
  };
}

export function outboxRetentionRuns(): PanelSpec {
  return {
    title: 'Outbox retention runs by result',
    description:
      'Runs of outbox retention, which deletes events, deliveries and inbox rows past their ' +
      'window. complete: nothing past the window was left. budget_spent: the run ran out of ' +
      'time with rows left, and the next run follows after a pause: for a while after a ' +
      'backlog, normal; for hours, retention deletes less than the gateway writes ' +
      '(OutboxRetentionBehind). error (red): the run failed.',
    runbook: RUNBOOK.outboxRetentionBehind,
    unit: 'ops',
    queries: [
      {
        expr: `sum by (result) (${rate('outbox_retention_runs_total')})`,
        legend: '{{result}}',
      },
    ],
    thresholds: [],
    alarmSeries: '^error$',
  };
}

export function outboxRetentionDeleted(): PanelSpec {
  return {
    title: 'Outbox retention deleted rows',
    description:
      'Rows outbox retention deleted per second, by table. Flat at zero while runs go on: ' +
      'nothing is past the window, or what is cannot go yet (a pending delivery, a consumer ' +
      'behind).',
    runbook: RUNBOOK.outboxRetentionBehind,
    unit: 'ops',
    queries: [
      {
        expr: `sum by (table) (${rate('outbox_retention_deleted_rows_total')})`,
        legend: '{{table}}',
      },
    ],
    thresholds: [],
  };
}

export function outboxBacklog(): PanelSpec {
  return {
    title: 'Outbox backlog',
    description:
      'Undelivered outbox deliveries per consumer. A steady climb means the consumer is slower ' +
      'than traffic or failing; red (1000 or more): see the oldest pending age and failures.',
    runbook: RUNBOOK.outboxLagging,
    unit: 'short',
    queries: [{ expr: 'max by (consumer) (outbox_backlog_events)', legend: '{{consumer}}' }],
    thresholds: [
      { value: 100, color: 'yellow' },
      { value: 1000, color: 'red' },
    ],
  };
}

export function outboxOldestAge(): PanelSpec {
  return {
    title: 'Oldest pending delivery',
    description:
      'Age of the oldest undelivered outbox delivery per consumer. Red past 5 minutes: ledger ' +
      'balances, receipts or webhooks are behind; the alert fires 2 minutes later.',
    runbook: RUNBOOK.outboxLagging,
    unit: 's',
    queries: [
      { expr: 'max by (consumer) (outbox_oldest_pending_age_seconds)', legend: '{{consumer}}' },
    ],
    thresholds: [
      { value: 60, color: 'yellow' },
      { value: 300, color: 'red' },
    ],
  };
}

export function outboxDeliveries(): PanelSpec {
  return {
    title: 'Outbox deliveries',
    description:
      'Delivery attempts per consumer; failed attempts are drawn red and retried with backoff. ' +
      'Failures on webhooks alone are usually a tenant endpoint that is down.',
    runbook: RUNBOOK.outboxLagging,
    unit: 'ops',
    queries: [
      {
        expr: `sum by (consumer, outcome) (${rate('outbox_deliveries_total')})`,
        legend: '{{consumer}} {{outcome}}',
      },
    ],
    thresholds: [],
    alarmSeries: ' failed$',
  };
}

export function ledgerPostings(): PanelSpec {
  return {
    title: 'Ledger postings by kind',
    description:
      'Postings written per second (duplicates excluded). Should follow captures and refunds; ' +
      'flat at zero while payments are captured means the ledger consumer is behind.',
    runbook: RUNBOOK.outboxLagging,
    unit: 'ops',
    queries: [{ expr: `sum by (kind) (${rate('ledger_postings_total')})`, legend: '{{kind}}' }],
    thresholds: [],
  };
}

/**
 * No threshold: no count is bad in itself (a single-node database has no standby at all);
 * what is bad is a synchronous standby gone, which only the alert's memory of it can tell.
 */
export function databaseStandbys(): PanelSpec {
  return {
    title: 'Database standbys',
    description:
      'Standbys streaming from the database primary (connected) and those it waits for at ' +
      'commit (synchronous), as the primary sees them. synchronous down to 0 where it was 1: ' +
      'commits are acknowledged by a single copy, and DatabaseSynchronousStandbyLost fires; ' +
      'with connected still 1 the standby is catching up, with 0 it is gone. Check ' +
      '`pg_autoctl show state`; bring the standby back, never turn synchronous replication ' +
      'off. No synchronous line: the role cannot see it (Replication state visible).',
    runbook: RUNBOOK.synchronousStandbyLost,
    unit: 'short',
    queries: [
      { expr: 'max(payments_db_standbys)', legend: 'connected' },
      { expr: 'max(payments_db_synchronous_standbys)', legend: 'synchronous' },
    ],
    thresholds: [],
  };
}

export function replicationVisible(): PanelSpec {
  return {
    title: 'Replication state visible',
    description:
      "Whether the gateway's database role can read if its standbys are synchronous " +
      '(superuser, or granted pg_monitor). Yellow (No): Database standbys has no synchronous ' +
      'line and DatabaseSynchronousStandbyLost cannot fire; grant the role pg_monitor.',
    runbook: RUNBOOK.replicationStateHidden,
    unit: 'bool_yes_no',
    queries: [{ expr: 'min(payments_db_replication_visible)', legend: 'visible' }],
    thresholds: [{ value: 1, color: 'yellow' }],
    lowIsBad: true,
  };
}

/**
 * Node's process metrics (process_*, nodejs_*) carry no `service` label (createMetrics leaves
 * them as prom-client makes them): a process is told apart by its scrape `instance` alone, and
 * a `{{service}}` legend would render empty.
 */
export function processCpu(): PanelSpec {
  return {
    title: 'CPU per process',
    description:
      'CPU time per process, as a share of one core (Node runs JavaScript on one). Red past ' +
      '95%: the process is saturated and latency follows; add processes.',
    runbook: RUNBOOK.saturation,
    unit: 'percentunit',
    queries: [
      {
        expr: `sum by (instance) (${rate('process_cpu_seconds_total')})`,
        legend: '{{instance}}',
      },
    ],
    thresholds: [
      { value: 0.8, color: 'yellow' },
      { value: 0.95, color: 'red' },
    ],
  };
}

export function eventLoopLag(): PanelSpec {
  return {
    title: 'Event loop lag p99',
    description:
      'How late timers fire, per process. Red past 0.5 s: every request on that process waits ' +
      'that long; check CPU and look for synchronous work.',
    runbook: RUNBOOK.saturation,
    unit: 's',
    queries: [
      {
        expr: 'max by (instance) (nodejs_eventloop_lag_p99_seconds)',
        legend: '{{instance}}',
      },
    ],
    thresholds: [
      { value: 0.1, color: 'yellow' },
      { value: 0.5, color: 'red' },
    ],
  };
}
