/**
 * The stack under test, as separate processes: one sandbox provider and GATEWAY_COUNT gateway
 * slots against the scratch database; in split tiers also a provider process and SPLIT_PAYMENTS
 * payments processes, gateway slot i reaching payments process i. A slot is a place a gateway runs in: SIGKILL ends its
 * process and a new one starts in the same slot at once, on a new port — clients ask the slot
 * for its current URL before each request, the way they would follow a service registry.
 */
import type { ChildProcess } from 'node:child_process';
import type { Child, ProcessRegistry } from './processes.ts';
import { freePort } from '../support/provider-process.ts';
import { GATEWAY_ENV, SANDBOX_ENV, SPLIT_PAYMENTS } from './tiers.ts';

const GATEWAY_READY = /GraphQL:\s+(http:\/\/127\.0\.0\.1:\d+)\/graphql/;
const PROVIDER_READY = /provider service: (http:\/\/\S+)/;
const PAYMENTS_READY = /payments service: (http:\/\/\S+)/;
/**
 * What a gateway's process runs when payments runs apart: with ops, which the settle step calls
 * (its reconciliation reads the provider's statement, so these processes reach the provider too).
 */
const GATEWAY_SIDE = 'gateway,ledger,notifications,tenants,ops';
const SANDBOX_READY = /sandbox-psp listening on (http:\/\/127\.0\.0\.1:\d+)/;

export const INTERNAL_TOKEN = 'itok_chaos_0000000000000000000000';
/** A synthetic data key (32 bytes of 0x22): gateways on DATABASE_URL refuse to start without. */
const DATA_ENCRYPTION_KEYS = `chaos1:${Buffer.alloc(32, 0x22).toString('base64')}`;
/** Synthetic keys, long enough for BOOTSTRAP_TENANTS, obviously not real. */
export const TENANTS = {
  a: { name: 'chaos-a', apiKey: 'sk_test_chaos_tenant_a_000000000000' },
  b: { name: 'chaos-b', apiKey: 'sk_test_chaos_tenant_b_000000000000' },
} as const;

export type SlotState = 'up' | 'starting' | 'paused' | 'down';

export class GatewaySlot {
  private child: Child | undefined;
  private starting: Promise<boolean> | undefined;
  private paused = false;
  generation = 0;
  /** Time spent starting gateways in this slot, for the report. */
  startingMs = 0;
  /** Gateways that died without the harness killing them (a crash is a finding). */
  readonly crashes: Array<{ exit: string; logFile: string }> = [];
  private killing: Child | undefined;
  /** The process of a start in progress, and whether the harness killed it on purpose. */
  private spawning: ChildProcess | undefined;
  private abortedStart = false;

  constructor(
    readonly index: number,
    private readonly start: (onSpawn: (child: ChildProcess) => void) => Promise<Child>,
  ) {}

  get state(): SlotState {
    if (this.starting !== undefined) return 'starting';
    if (this.child === undefined || !this.child.alive()) return 'down';
    return this.paused ? 'paused' : 'up';
  }

  /** The URL of the running gateway, or undefined while none is (clients pick another slot). */
  get url(): string | undefined {
    return this.child?.alive() === true ? this.child.url : undefined;
  }

  /**
   * Starts a gateway in this slot (the first time, or after a kill). Resolves true once it
   * serves, false if the harness killed it while it started; rejects if it failed on its own.
   */
  boot(): Promise<boolean> {
    this.starting ??= (async () => {
      const began = Date.now();
      try {
        const child = await this.start((spawned) => {
          this.spawning = spawned;
        });
        if (this.abortedStart) {
          // killWhileStarting's SIGKILL landed after the ready line but before this line ran:
          // the process is ours to bury, never this slot's gateway, and its death no crash.
          // (Adopting it here once made a soak run report four harness kills as crashes.)
          await child.exited;
          return false;
        }
        this.child = child;
        this.startingMs += Date.now() - began;
        void child.exited.then(() => this.noteExit(child));
        this.paused = false;
        this.generation += 1;
        return true;
      } catch (error) {
        if (!this.abortedStart) throw error;
        return false;
      } finally {
        this.starting = undefined;
        this.spawning = undefined;
        this.abortedStart = false;
      }
    })();
    return this.starting;
  }

  /** kill -9 of a gateway that is still starting; false if none is starting right now. */
  async killWhileStarting(): Promise<boolean> {
    const spawned = this.spawning;
    const starting = this.starting;
    if (spawned === undefined || starting === undefined) return false;
    this.abortedStart = true;
    spawned.kill('SIGKILL');
    await starting;
    return true;
  }

  /** Resolves once a gateway runs here (started or restarting), for a fault that needs one. */
  async running(): Promise<void> {
    if (this.starting !== undefined) await this.starting;
    if (this.child === undefined || !this.child.alive()) await this.boot();
  }

  /** kill -9 of the slot's gateway (paused or not); resolves once the process is gone. */
  async kill(): Promise<void> {
    await this.running();
    const child = this.child;
    if (child === undefined) return;
    this.killing = child;
    child.process.kill('SIGKILL');
    await child.exited;
    this.paused = false;
  }

  private noteExit(child: Child): void {
    if (child === this.killing) return;
    const exit = child.exit();
    this.crashes.push({
      exit: exit?.signal ?? `exit code ${String(exit?.code)}`,
      logFile: child.logFile,
    });
  }

  /** The harness is stopping its gateways: their exits are not crashes. */
  retire(): void {
    this.killing = this.child;
  }

  /** SIGSTOP for `ms`, then SIGCONT — unless the process was killed meanwhile. */
  async pause(ms: number): Promise<boolean> {
    await this.running();
    const child = this.child;
    if (child === undefined || this.paused) return false;
    this.paused = true;
    child.process.kill('SIGSTOP');
    await new Promise((resolve) => setTimeout(resolve, ms));
    if (this.child === child && child.alive()) child.process.kill('SIGCONT');
    if (this.child === child) this.paused = false;
    return true;
  }

  /** Wakes a paused gateway (at the end of the run, or on the way out). */
  resume(): void {
    if (this.paused && this.child?.alive() === true) this.child.process.kill('SIGCONT');
    this.paused = false;
  }
}

/**
 * A service's process in a split tier (the provider, or one payments process): at one port for
 * the whole run, as a service's address is in a deployment, so a SIGKILLed one is restarted
 * where its callers (through the hop's fault proxy) expect it.
 */
export class ServiceSlot {
  private child: Child | undefined;
  private killing: Child | undefined;
  /** Processes of this slot that died without the harness killing them. */
  readonly crashes: Array<{ exit: string; logFile: string }> = [];

  constructor(
    readonly name: string,
    private readonly start: () => Promise<Child>,
  ) {}

  async boot(): Promise<void> {
    const child = await this.start();
    this.child = child;
    void child.exited.then(() => {
      if (child === this.killing) return;
      const exit = child.exit();
      this.crashes.push({
        exit: exit?.signal ?? `exit code ${String(exit?.code)}`,
        logFile: child.logFile,
      });
    });
  }

  /** kill -9, then a new process at the same port; resolves once it serves. */
  async killAndRestart(): Promise<void> {
    const child = this.child;
    if (child !== undefined) {
      this.killing = child;
      child.process.kill('SIGKILL');
      await child.exited;
    }
    await this.boot();
  }

  /** The harness is stopping: the coming exit is not a crash. */
  retire(): void {
    this.killing = this.child;
  }
}

export interface Stack {
  sandboxUrl: string;
  slots: GatewaySlot[];
  /** Split tiers: the provider's process, then the payments processes; empty otherwise. */
  services: ServiceSlot[];
}

/** Where the processes reach the database, the provider and, split, each other. */
export interface Route {
  databaseUrl: string;
  pspUrl: string;
  /** Split tiers: each service's tRPC endpoint, through its hop's fault proxy. */
  services: { providerUrl: string; paymentsUrls: string[] } | null;
}

export async function startStack(input: {
  registry: ProcessRegistry;
  gateways: number;
  /** The services apart, as the split tier runs them. */
  split: boolean;
  /** The routes through the network's proxies, given the service processes' fixed ports. */
  route: (input: {
    sandboxUrl: string;
    servicePorts: { provider: number; payments: number[] } | null;
  }) => Promise<Route>;
}): Promise<Stack> {
  const { registry } = input;
  const sandbox = await registry.start({
    name: 'sandbox-psp',
    entry: 'sandbox-psp/main.ts',
    env: { ...SANDBOX_ENV, SANDBOX_PSP_PORT: '0' },
    ready: SANDBOX_READY,
  });
  const servicePorts = input.split
    ? {
        provider: await freePort(),
        payments: await Promise.all(Array.from({ length: SPLIT_PAYMENTS }, () => freePort())),
      }
    : null;
  const route = await input.route({ sandboxUrl: sandbox.url, servicePorts });
  const common = {
    ...GATEWAY_ENV,
    DATABASE_URL: route.databaseUrl,
    INTERNAL_TOKEN,
    DATA_ENCRYPTION_KEYS,
  };
  const services =
    servicePorts === null || route.services === null
      ? []
      : splitServices({ registry, route, ports: servicePorts, common, urls: route.services });
  for (const service of services) await service.boot();
  const gatewayEnv = (index: number) => ({
    ...common,
    ...(route.services === null
      ? { PSP_URL: route.pspUrl }
      : {
          PSP_URL: '',
          SERVICES: GATEWAY_SIDE,
          SERVICE_URLS: [
            `payments=${route.services.paymentsUrls[index % SPLIT_PAYMENTS]}`,
            `provider=${route.services.providerUrl}`,
          ].join(','),
        }),
    PORT: '0',
    BOOTSTRAP_TENANTS: `${TENANTS.a.name}:${TENANTS.a.apiKey},${TENANTS.b.name}:${TENANTS.b.apiKey}`,
  });
  const slots = Array.from(
    { length: input.gateways },
    (_, index) =>
      new GatewaySlot(index, (onSpawn) =>
        registry.start({
          name: `gateway-${index}`,
          entry: 'app/main.ts',
          env: gatewayEnv(index),
          ready: GATEWAY_READY,
          onSpawn,
        }),
      ),
  );
  await Promise.all(slots.map((slot) => slot.boot()));
  return { sandboxUrl: sandbox.url, slots, services };
}

/** The provider process, then the payments processes, each at its fixed port. */
function splitServices(input: {
  registry: ProcessRegistry;
  route: Route;
  ports: { provider: number; payments: number[] };
  common: Record<string, string>;
  urls: { providerUrl: string; paymentsUrls: string[] };
}): ServiceSlot[] {
  const { registry, route, ports, common, urls } = input;
  const provider = new ServiceSlot('provider', () =>
    registry.start({
      name: 'provider',
      entry: 'app/main.ts',
      env: {
        ...common,
        SERVICES: 'provider',
        INTERNAL_PORT: String(ports.provider),
        PSP_URL: route.pspUrl,
      },
      ready: PROVIDER_READY,
    }),
  );
  const payments = ports.payments.map(
    (port, index) =>
      new ServiceSlot(`payments-${index}`, () =>
        registry.start({
          name: `payments-${index}`,
          entry: 'app/main.ts',
          env: {
            ...common,
            SERVICES: 'payments',
            SERVICE_URLS: `provider=${urls.providerUrl}`,
            INTERNAL_PORT: String(port),
            PSP_URL: '',
          },
          ready: PAYMENTS_READY,
        }),
      ),
  );
  return [provider, ...payments];
}
