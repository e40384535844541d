/**
 * The fleet at a glance: traffic, stuck and unknown requests, provider, outbox, processes, the
 * database's standbys.
 */
import type * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import * as fleet from './fleet-panels.ts';
import { addRows } from './layout.ts';
import { dashboardShell } from './shell.ts';
import { stat, timeseries } from './panels.ts';
import { FLEET } from './promql.ts';
import * as requests from './request-panels.ts';

export const OVERVIEW_UID = 'payments-gateway-overview';

export function overviewDashboard(): dashboard.Dashboard {
  const shell = dashboardShell({ uid: OVERVIEW_UID, title: 'Payments gateway: overview' });
  return addRows(shell, [
    {
      title: 'Requests',
      panels: [
        timeseries({ ...requests.requestsByOutcome(FLEET), width: 12 }),
        timeseries({ ...requests.graphqlLatency(FLEET), width: 12 }),
        timeseries(requests.replays(FLEET)),
        timeseries(requests.conflicts(FLEET)),
        timeseries(requests.expiredRetries(FLEET)),
      ],
    },
    {
      title: 'Stuck and unknown requests',
      panels: [
        stat({ ...requests.unknownOutcomes(FLEET), width: 6 }),
        timeseries({ ...requests.inProgressAge(FLEET), width: 9 }),
        timeseries({ ...requests.staleLeases(FLEET), width: 9 }),
      ],
    },
    {
      title: 'Recovery worker and retention',
      panels: [
        timeseries({ ...requests.takeovers(FLEET), width: 5 }),
        timeseries({ ...fleet.recoverySweeps(), width: 5 }),
        stat({ ...fleet.secondsSinceLastSweep(), width: 5 }),
        timeseries({ ...fleet.retentionRuns(), width: 5 }),
        stat({ ...fleet.partitionRunway(), width: 4 }),
      ],
    },
    {
      title: 'Provider',
      panels: [
        timeseries(requests.providerOutcomes(FLEET)),
        timeseries(requests.providerTimeoutRatio(FLEET)),
        timeseries(requests.providerLatency(FLEET)),
      ],
    },
    {
      title: 'Outbox and ledger',
      panels: [
        timeseries({ ...fleet.outboxBacklog(), width: 6 }),
        timeseries({ ...fleet.outboxOldestAge(), width: 6 }),
        timeseries({ ...fleet.outboxDeliveries(), width: 6 }),
        timeseries({ ...fleet.ledgerPostings(), width: 6 }),
      ],
    },
    {
      title: 'Processes',
      panels: [
        timeseries({ ...fleet.processCpu(), width: 12 }),
        timeseries({ ...fleet.eventLoopLag(), width: 12 }),
      ],
    },
    // Last, so that the panels above keep their ids (and links to them keep working).
    {
      title: 'Database',
      panels: [
        timeseries({ ...fleet.databaseStandbys(), width: 16 }),
        stat({ ...fleet.replicationVisible(), width: 8 }),
      ],
    },
    // After the rows above, for the same reason.
    {
      title: 'Outbox retention',
      panels: [
        timeseries({ ...fleet.outboxRetentionRuns(), width: 12 }),
        timeseries({ ...fleet.outboxRetentionDeleted(), width: 12 }),
      ],
    },
  ]).build();
}
