import { startChild, type StartedChild } from './child-process.ts';
import {
  TENANT_A,
  TENANT_B,
  INTERNAL_TOKEN,
  TEST_DATA_ENCRYPTION_KEYS,
  TEST_WEBHOOK_ALLOWED_HOSTS,
} from './test-stack.ts';

export type GatewayProcess = StartedChild;

/**
 * Starts a real gateway process through `npm start`'s entry point, against the test's database
 * and provider. `env` sets LEASE_MS, RECOVERY_INTERVAL_MS, FAULT_POINTS and the like.
 */
export async function startGatewayProcess(opts: {
  databaseUrl: string;
  /** null: the sandbox provider runs inside the gateway process, as with a bare `npm start`. */
  pspUrl: string | null;
  env?: Record<string, string>;
  /**
   * A built main.js (scripts/build.ts), run by plain node as `npm start` runs dist/app/main.js;
   * by default the TypeScript source through tsx, so a test needs no build step.
   */
  builtMain?: string;
}): Promise<GatewayProcess> {
  const args = opts.builtMain === undefined ? ['--import', 'tsx', 'app/main.ts'] : [opts.builtMain];
  return startChild({
    name: 'gateway',
    args,
    env: {
      ...process.env,
      // The built gateway runs with plain node: nothing inherited may load tsx into it.
      ...(opts.builtMain === undefined ? {} : { NODE_OPTIONS: '' }),
      // As in production: vitest sets NODE_ENV=test, which changes libraries' behaviour (Apollo's
      // signal handling among others) and once hid a shutdown hang from the tests.
      // Fault points are refused outside NODE_ENV=test; a crash test's gateway runs under it.
      NODE_ENV: opts.env?.['FAULT_POINTS'] === undefined ? 'production' : 'test',
      DATABASE_URL: opts.databaseUrl,
      PSP_URL: opts.pspUrl ?? '',
      PORT: '0',
      INTERNAL_TOKEN,
      // NODE_ENV=production on DATABASE_URL: the gateway refuses to start without data keys.
      DATA_ENCRYPTION_KEYS: TEST_DATA_ENCRYPTION_KEYS,
      BOOTSTRAP_TENANTS: `${TENANT_A.name}:${TENANT_A.apiKey},${TENANT_B.name}:${TENANT_B.apiKey}`,
      // Tests' webhook receivers listen on loopback, which the policy refuses unless allowed.
      WEBHOOK_ALLOWED_HOSTS: TEST_WEBHOOK_ALLOWED_HOSTS,
      ...opts.env,
    },
    ready: /GraphQL:\s+(http:\/\/127\.0\.0\.1:\d+)\/graphql/,
  });
}

/** A service process of its own (SERVICES without the gateway); `url` is its tRPC endpoint. */
export type ServiceProcess = StartedChild;

/**
 * Services without the gateway in a real process, as `npm start` runs them: `services` (a
 * SERVICES value) on INTERNAL_PORT, the others at `serviceUrls` (a SERVICE_URLS value), and the
 * background jobs of what it runs. `env` sets LEASE_MS, RECOVERY_INTERVAL_MS and the like.
 */
export function startServiceProcess(opts: {
  databaseUrl: string;
  services: string;
  serviceUrls: string;
  port: number;
  env?: Record<string, string>;
}): Promise<ServiceProcess> {
  return startChild({
    name: `${opts.services} process`,
    args: ['--import', 'tsx', 'app/main.ts'],
    env: {
      ...process.env,
      // Fault points are refused outside NODE_ENV=test; a crash test's process runs under it.
      NODE_ENV: opts.env?.['FAULT_POINTS'] === undefined ? 'production' : 'test',
      DATABASE_URL: opts.databaseUrl,
      SERVICES: opts.services,
      SERVICE_URLS: opts.serviceUrls,
      PSP_URL: '',
      INTERNAL_PORT: String(opts.port),
      INTERNAL_TOKEN,
      DATA_ENCRYPTION_KEYS: TEST_DATA_ENCRYPTION_KEYS,
      BOOTSTRAP_TENANTS: `${TENANT_A.name}:${TENANT_A.apiKey},${TENANT_B.name}:${TENANT_B.apiKey}`,
      WEBHOOK_ALLOWED_HOSTS: TEST_WEBHOOK_ALLOWED_HOSTS,
      ...opts.env,
    },
    ready: /services?: (http:\/\/\S+\/trpc)/,
  });
}
