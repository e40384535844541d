import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { startSandboxPsp, type SandboxPsp } from '../../sandbox-psp/sandbox-server.ts';
import {
  startGatewayProcess,
  startServiceProcess,
  type GatewayProcess,
  type ServiceProcess,
} from './gateway-process.ts';
import { useTestDatabase } from './test-database.ts';

/** A crash test's lease: short, so a takeover happens within the test; far above one visa round trip. */
export const CRASH_TEST_LEASE_MS = 1_000;
/** A gateway whose recovery worker never sweeps within a test: only a client's retry resumes. */
export const RECOVERY_WORKER_OFF = {
  RECOVERY_INTERVAL_MS: '3600000',
  LEASE_MS: String(CRASH_TEST_LEASE_MS),
};
/** A gateway whose recovery worker sweeps every 100 ms: it resumes with no client. */
export const RECOVERY_WORKER_ON = {
  RECOVERY_INTERVAL_MS: '100',
  LEASE_MS: String(CRASH_TEST_LEASE_MS),
};
/** What a gateway's process runs when payments runs apart: the services that read for it. */
export const GATEWAY_SIDE = 'gateway,ledger,notifications,tenants';

/** Long enough for a payment to outlive a service process's restart, a lease's takeover and retries. */
export const SPLIT_FINAL_DEADLINE_MS = 30_000;

/**
 * After a kill that rolled the admission back, how long to watch for a resume that must not
 * happen: past one lease, so a worker that found something to take over would have done so.
 */
export const NOTHING_TO_RESUME_WAIT_MS = CRASH_TEST_LEASE_MS + 500;

/**
 * What a crash test runs real gateway processes against: its own test database, a pool to read
 * what the processes left in it, and a sandbox provider outside them, so a killed gateway does not
 * take the provider's record of charges with it. Read it inside hooks and tests.
 */
export interface GatewayProcessRig {
  readonly sandbox: SandboxPsp;
  readonly db: pg.Pool;
  /** A gateway process on the rig's database and sandbox; `env` as for startGatewayProcess. */
  startGateway(env: Record<string, string>): Promise<GatewayProcess>;
  /**
   * A process of services without the gateway on the rig's database, on `port`: `services` as
   * SERVICES, `serviceUrls` as SERVICE_URLS.
   */
  startServices(opts: {
    services: string;
    serviceUrls: string;
    port: number;
    env?: Record<string, string>;
  }): Promise<ServiceProcess>;
  /** Runs `body` against a gateway started with `env`, then stops it with SIGTERM, come what may. */
  withGateway<T>(
    env: Record<string, string>,
    body: (gateway: GatewayProcess) => Promise<T>,
  ): Promise<T>;
}

/** The rig for the enclosing file: set up before its tests, taken down after them. */
export function useGatewayProcessRig(label: string): GatewayProcessRig {
  const database = useTestDatabase(label);
  let sandbox: SandboxPsp | undefined;
  let db: pg.Pool | undefined;
  beforeAll(async () => {
    sandbox = await startSandboxPsp();
    db = new pg.Pool({ connectionString: database.url, max: 2 });
  });
  afterAll(async () => {
    await sandbox?.close();
    await db?.end();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined)
      throw new Error(`useGatewayProcessRig('${label}'): read before its beforeAll ran`);
    return value;
  };
  const rig: GatewayProcessRig = {
    get sandbox() {
      return ready(sandbox);
    },
    get db() {
      return ready(db);
    },
    startGateway: (env) =>
      startGatewayProcess({ databaseUrl: database.url, pspUrl: ready(sandbox).url, env }),
    startServices: (opts) => startServiceProcess({ databaseUrl: database.url, ...opts }),
    async withGateway(env, body) {
      const gateway = await rig.startGateway(env);
      try {
        return await body(gateway);
      } finally {
        await gateway.kill('SIGTERM');
      }
    },
  };
  return rig;
}
