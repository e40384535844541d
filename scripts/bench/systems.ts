/**
 * The processes the benches start, from the project's build: the sandbox PSP, the gateway as
 * the benches run it, and the two baseline servers.
 */
import type { Child, Children } from './children.ts';

/** The gateway's background work held back past any run the bounds allow: the request path alone. */
const HELD_BACK_MS = String(3 * 3_600_000);
/** A synthetic data key (32 bytes of 0x42): the gateway seals answers as in production. */
const DATA_ENCRYPTION_KEYS = `bench1:${Buffer.alloc(32, 0x42).toString('base64')}`;
const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+)/;

export function startPsp(children: Children): Promise<Child> {
  const env = { SANDBOX_PSP_PORT: '0' };
  return children.start({
    name: 'sandbox-psp',
    entry: 'sandbox-psp/main.ts',
    env,
    ready: LISTENING,
  });
}

export function startGateway(
  children: Children,
  spec: {
    databaseUrl: string;
    pspUrl: string;
    apiKey: string;
    /**
     * `running`: the outbox delivers as under `npm start`, and the bench charges its work to the
     * phase that left it; `held back`: the request path alone, as bench:ab compares it.
     */
    outbox: 'running' | 'held back';
    env?: Record<string, string>;
    nodeArgs?: string[];
  },
): Promise<Child> {
  return children.start({
    name: 'gateway',
    entry: 'app/main.ts',
    env: {
      DATABASE_URL: spec.databaseUrl,
      PSP_URL: spec.pspUrl,
      PORT: '0',
      BOOTSTRAP_TENANTS: `bench:${spec.apiKey}`,
      // A gateway on DATABASE_URL refuses to start without data keys; a commit from before
      // them (bench:ab's before side) ignores the variable.
      DATA_ENCRYPTION_KEYS,
      RECOVERY_INTERVAL_MS: HELD_BACK_MS,
      RECONCILIATION_INTERVAL_MS: HELD_BACK_MS,
      RETENTION_INTERVAL_MS: HELD_BACK_MS,
      ...(spec.outbox === 'held back' ? { OUTBOX_INTERVAL_MS: HELD_BACK_MS } : {}),
      ...spec.env,
    },
    nodeArgs: spec.nodeArgs,
    ready: /GraphQL:\s+(http:\/\/127\.0\.0\.1:\d+)\/graphql/,
  });
}

export function startBaseline(
  children: Children,
  spec: {
    name: 'apollo-reference' | 'reference' | 'bare';
    databaseUrl: string;
    pspUrl: string;
    /** The one tenant the reference behind Apollo pays for (it authenticates nobody). */
    tenantId: string;
    nodeArgs?: string[];
  },
): Promise<Child> {
  return children.start({
    name: spec.name,
    entry: `scripts/bench/${spec.name}-server.ts`,
    env: {
      DATABASE_URL: spec.databaseUrl,
      PSP_URL: spec.pspUrl,
      BASELINE_TENANT_ID: spec.tenantId,
    },
    nodeArgs: spec.nodeArgs,
    ready: LISTENING,
  });
}
