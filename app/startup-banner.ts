import { createHash } from 'node:crypto';
import type { ExplorerStatus } from '../gateway/explorer/open-explorer.ts';

/** A secret as the banner may show it: in full only when this start generated it. */
export interface StartupSecret {
  value: string;
  /** Made by this start, so nobody else holds it yet and the banner is where the operator sees it. */
  generatedNow: boolean;
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
  tenants: Array<{ name: string; apiKey: StartupSecret }>;
}

/**
 * A key's fingerprint: enough to tell which key a tenant has (compare with the operator's own
 * copy), and nothing that helps to guess it.
 */
export function keyFingerprint(secret: string): string {
  return `sha256:${createHash('sha256').update(secret).digest('hex').slice(0, 12)}`;
}

/**
 * What `npm start` prints. A key or token that came from the environment is never printed: the
 * log pipeline that collects stdout would then hold, in clear, secrets the database stores only
 * hashed. A generated one is printed once, at the start that made it.
 */
export function startupBanner(facts: StartupFacts): string {
  const shown = (secret: StartupSecret) =>
    secret.generatedNow ? secret.value : `(not shown; ${keyFingerprint(secret.value)})`;
  return [
    `payments gateway ready`,
    `  GraphQL:   ${facts.base}/graphql`,
    `  explorer:  ${explorerLine(facts.base, facts.explorer)}`,
    `  metrics:   ${facts.internalBase}/metrics`,
    `  tRPC:      ${facts.internalBase}/trpc  (Authorization: Bearer ${shown(facts.internalToken)})`,
    `  database:  ${facts.database}`,
    `  provider:  ${facts.provider}`,
    `  data keys: ${facts.dataKeys}`,
    ...facts.tenants.map((t) => `  tenant ${t.name}: API key ${shown(t.apiKey)}`),
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
