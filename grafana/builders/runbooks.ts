/**
 * Runbook sections of grafana/RUNBOOKS.md: one per alert, plus one for signals that only a
 * dashboard shows. Panels and alert rules link here by absolute URL, so the link is one click in
 * Grafana, Alertmanager or a page; a unit test checks that each anchor exists, so a renamed
 * heading cannot leave on-call with a dead link.
 */

/**
 * Where a person's browser finds RUNBOOKS.md: by default the `runbooks` service of
 * grafana/compose.yaml, which serves grafana/runbooks/index.html (written from RUNBOOKS.md by
 * `npm run dashboards`). To link elsewhere (the repository's web page of grafana/RUNBOOKS.md,
 * a wiki), change it and run `npm run dashboards`: the dashboards and the alert rules'
 * `runbook_url` both follow (docs/decisions/0045-runbook-links-as-absolute-urls.md).
 */
export const RUNBOOKS_URL = 'http://localhost:3001/';

/** The absolute URL of one section, by its heading's anchor. */
export function runbookUrl(anchor: string): string {
  return `${RUNBOOKS_URL}#${anchor}`;
}

export const RUNBOOK = {
  unknownOutcomes: runbookUrl('idempotencyunknownoutcomes'),
  requestStuck: runbookUrl('idempotencyrequeststuck'),
  keyReuseSurge: runbookUrl('idempotencykeyreusesurge'),
  providerTimeouts: runbookUrl('providertimeoutratehigh'),
  outboxLagging: runbookUrl('outboxdeliverylagging'),
  outboxRetentionBehind: runbookUrl('outboxretentionbehind'),
  recoveryNotSweeping: runbookUrl('recoveryworkernotsweeping'),
  partitionsRunningOut: runbookUrl('idempotencypartitionsrunningout'),
  synchronousStandbyLost: runbookUrl('databasesynchronousstandbylost'),
  replicationStateHidden: runbookUrl('databasereplicationstatehidden'),
  saturation: runbookUrl('gateway-saturation-no-alert'),
} as const;
