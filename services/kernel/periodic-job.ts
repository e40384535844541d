/**
 * Runs `work` every `intervalMs`, never overlapping itself. `stop()` waits for a run in
 * progress, so a shutdown never abandons a half-done sweep. Timers are unref'd: a job alone
 * never keeps a process alive.
 */
export class PeriodicJob {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = true;

  constructor(
    private readonly work: () => Promise<unknown>,
    private readonly opts: { intervalMs: number; onError: (error: unknown) => void },
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.work()
        .catch((error: unknown) => this.opts.onError(error))
        .finally(() => this.schedule());
    }, this.opts.intervalMs);
    this.timer.unref();
  }
}
