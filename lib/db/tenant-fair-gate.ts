import { AppError, LIB_ERRORS } from '../errors.ts';

/**
 * Shares a scarce resource (a pool's connections) fairly among tenants: at most `capacity` tasks
 * run at once, at most `perTenant` of them one tenant's, and when a place frees the next task is
 * taken from the tenants waiting in turn, one task each, however many one tenant queued.
 *
 * Without it, a pool's own queue is first come, first served: a tenant that sends eight heavy
 * reads at once holds every connection, and another tenant's one light read waits behind all
 * eight. With it, that read waits for at most one task to end, and usually for none.
 *
 * The queue is bounded per tenant: a tenant with `maxQueuedPerTenant` tasks waiting is refused
 * at once (TenantReadsBusyError), so that one tenant cannot grow memory or everyone's wait.
 */
export class TenantFairGate {
  private running = 0;
  private readonly runningByTenant = new Map<string, number>();
  /** Tenants with tasks waiting; each tenant's tasks in arrival order. */
  private readonly waiting = new Map<string, Array<() => void>>();
  /** When each tenant running or waiting last started a task (a sequence number). */
  private readonly lastStarted = new Map<string, number>();
  private starts = 0;

  constructor(
    private readonly limits: { capacity: number; perTenant: number; maxQueuedPerTenant: number },
  ) {}

  async run<T>(tenantId: string, task: () => Promise<T>): Promise<T> {
    if (!this.mayStart(tenantId)) {
      const queue = this.waiting.get(tenantId) ?? [];
      if (queue.length >= this.limits.maxQueuedPerTenant) throw new TenantReadsBusyError();
      await new Promise<void>((resolve) => {
        queue.push(resolve);
        this.waiting.set(tenantId, queue);
      });
    } else {
      this.take(tenantId);
    }
    try {
      return await task();
    } finally {
      this.release(tenantId);
    }
  }

  private mayStart(tenantId: string): boolean {
    return (
      this.running < this.limits.capacity &&
      (this.runningByTenant.get(tenantId) ?? 0) < this.limits.perTenant &&
      !this.waiting.has(tenantId)
    );
  }

  private take(tenantId: string): void {
    this.lastStarted.set(tenantId, ++this.starts);
    this.running += 1;
    this.runningByTenant.set(tenantId, (this.runningByTenant.get(tenantId) ?? 0) + 1);
  }

  private release(tenantId: string): void {
    this.running -= 1;
    const left = (this.runningByTenant.get(tenantId) ?? 1) - 1;
    if (left === 0) this.runningByTenant.delete(tenantId);
    else this.runningByTenant.set(tenantId, left);
    if (left === 0 && !this.waiting.has(tenantId)) this.lastStarted.delete(tenantId);
    this.startNext();
  }

  /**
   * Starts waiting tasks while there is room: of the tenants waiting and under their own limit,
   * the one that started a task least recently gives up its oldest task (round robin by service,
   * so a tenant that queued first does not also go first every time).
   */
  private startNext(): void {
    while (this.running < this.limits.capacity) {
      let next: string | undefined;
      for (const tenant of this.waiting.keys()) {
        if ((this.runningByTenant.get(tenant) ?? 0) >= this.limits.perTenant) continue;
        if (next === undefined || this.turnOf(tenant) < this.turnOf(next)) next = tenant;
      }
      if (next === undefined) return;
      const queue = this.waiting.get(next)!;
      const resolve = queue.shift()!;
      if (queue.length === 0) this.waiting.delete(next);
      this.take(next);
      resolve();
    }
  }

  private turnOf(tenantId: string): number {
    return this.lastStarted.get(tenantId) ?? 0;
  }
}

/** A tenant already has as many tasks waiting as the gate queues for one tenant. */
export class TenantReadsBusyError extends AppError {
  constructor() {
    super(LIB_ERRORS.TENANT_READS_BUSY);
  }
}
