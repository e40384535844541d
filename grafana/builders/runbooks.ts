/**
 * Runbook sections of grafana/RUNBOOKS.md: one per alert, plus one for signals that only a
 * dashboard shows. Panels and alert rules link here, and a unit test checks that each anchor
 * exists, so a renamed heading cannot leave on-call with a dead link.
 */
const RUNBOOKS = 'grafana/RUNBOOKS.md';

export const RUNBOOK = {
  unknownOutcomes: `${RUNBOOKS}#idempotencyunknownoutcomes`,
  requestStuck: `${RUNBOOKS}#idempotencyrequeststuck`,
  keyReuseSurge: `${RUNBOOKS}#idempotencykeyreusesurge`,
  providerTimeouts: `${RUNBOOKS}#providertimeoutratehigh`,
  outboxLagging: `${RUNBOOKS}#outboxdeliverylagging`,
  recoveryNotSweeping: `${RUNBOOKS}#recoveryworkernotsweeping`,
  partitionsRunningOut: `${RUNBOOKS}#idempotencypartitionsrunningout`,
  synchronousStandbyLost: `${RUNBOOKS}#databasesynchronousstandbylost`,
  replicationStateHidden: `${RUNBOOKS}#databasereplicationstatehidden`,
  saturation: `${RUNBOOKS}#gateway-saturation-no-alert`,
} as const;
