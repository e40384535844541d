/** One operation (createPayment, capturePayment, …), picked in the `operation` variable. */
import {
  QueryVariableBuilder,
  VariableRefresh,
  VariableSort,
  type Dashboard,
} from '@grafana/grafana-foundation-sdk/dashboard';
import { addRows } from './layout.ts';
import { PROMETHEUS, stat, timeseries } from './panels.ts';
import { ONE_OPERATION } from './promql.ts';
import * as requests from './request-panels.ts';
import { dashboardShell } from './shell.ts';

export const OPERATION_UID = 'payments-gateway-operation';

const OPERATIONS = 'label_values(idempotency_requests_total, operation)';

export function operationDashboard(): Dashboard {
  const shell = dashboardShell({ uid: OPERATION_UID, title: 'Payments gateway: operation' });
  shell.withVariable(
    new QueryVariableBuilder('operation')
      .label('Operation')
      .datasource(PROMETHEUS)
      .query(OPERATIONS)
      .definition(OPERATIONS)
      // On time-range change, so an operation first called a minute ago appears in the list.
      .refresh(VariableRefresh.OnTimeRangeChanged)
      .sort(VariableSort.AlphabeticalAsc)
      .multi(false)
      .includeAll(false),
  );
  const scope = ONE_OPERATION;
  return addRows(shell, [
    {
      title: 'Requests: $operation',
      panels: [
        timeseries({ ...requests.requestsByOutcome(scope), width: 12 }),
        timeseries({ ...requests.graphqlLatency(scope), width: 12 }),
        timeseries(requests.replays(scope)),
        timeseries(requests.conflicts(scope)),
        timeseries(requests.expiredRetries(scope)),
      ],
    },
    {
      title: 'Stuck and unknown: $operation',
      panels: [
        stat({ ...requests.unknownOutcomes(scope), width: 6 }),
        timeseries({ ...requests.inProgressAge(scope), width: 6 }),
        timeseries({ ...requests.staleLeases(scope), width: 6 }),
        timeseries({ ...requests.takeovers(scope), width: 6 }),
      ],
    },
    {
      title: 'Provider: $operation',
      panels: [
        timeseries(requests.providerOutcomes(scope)),
        timeseries(requests.providerTimeoutRatio(scope)),
        timeseries(requests.providerLatency(scope)),
      ],
    },
  ]).build();
}
