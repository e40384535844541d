import { apiKeyDisplayPrefix } from '../services/tenants/index.ts';
import type { ExplorerStatus } from '../gateway/explorer/open-explorer.ts';

/** A secret as the banner may show it: in full only when this start generated it. */
export interface StartupSecret {
  value: string;
  /** Made by this start, so nobody else holds it yet and the banner is where the operator sees it. */
  generatedNow: boolean;
  /** The file it is kept in, named instead of it on later starts. */
  keptIn?: string;
}

export interface StartupFacts {
  base: string;
  internalBase: string;
  database: string;
  provider: string;
  /** Where the data keys came from and which one seals: never the key itself. */
  dataKeys: string;
  internalToken: StartupSecret;
  explorer: ExplorerStatus;
  /** Webhooks may reach loopback by embedded mode's default, not by WEBHOOK_ALLOWED_HOSTS. */
  webhookLoopbackByDefault: boolean;
  tenants: Array<{ name: string; apiKey: StartupSecret }>;
}

/**
 * What `npm start` prints. A key or token that came from the environment is never printed, nor
 * any hash of it: the log pipeline that collects stdout would then hold, in clear, a secret or an
 * offline oracle for one (an unsalted hash prefix of a short key is enough to test guesses
 * against). A key is named by its display prefix, the part the database keeps in clear anyway.
 * A generated one is printed once, at the start that made it.
 */
export function startupBanner(facts: StartupFacts): string {
  const shown = (secret: StartupSecret, instead: string) =>
    secret.generatedNow ? secret.value : `(not shown; ${secret.keptIn ?? instead})`;
  return [
    `payments gateway ready`,
    `  GraphQL:   ${facts.base}/graphql`,
    `  explorer:  ${explorerLine(facts.base, facts.explorer)}`,
    `  metrics:   ${facts.internalBase}/metrics`,
    `  tRPC:      ${facts.internalBase}/trpc  (Authorization: Bearer ${shown(facts.internalToken, 'INTERNAL_TOKEN')})`,
    `  database:  ${facts.database}`,
    `  provider:  ${facts.provider}`,
    `  data keys: ${facts.dataKeys}`,
    // A developer's receiver on 127.0.0.1 works without a setting; the line says which one changes it.
    ...(facts.webhookLoopbackByDefault
      ? ['  webhooks:  loopback allowed (embedded mode); set WEBHOOK_ALLOWED_HOSTS to change']
      : []),
    ...facts.tenants.map(
      (t) =>
        `  tenant ${t.name}: API key ${shown(t.apiKey, `${apiKeyDisplayPrefix(t.apiKey.value)}…`)}`,
    ),
  ].join('\n');
}

function explorerLine(base: string, explorer: ExplorerStatus): string {
  switch (explorer.state) {
    case 'ready':
      return `${base}/graphql in a browser`;
    case 'off':
      return 'off (EXPLORER=false)';
    case 'unavailable':
      return `not served: ${explorer.reason}`;
  }
}
