/**
 * Runs `work` every `intervalMs`, never overlapping itself; with `delayAfter`, the wait before
 * the next run is what it says for the last run's result (undefined when the run failed).
 * `stop()` waits for a run in progress, so a shutdown never abandons a half-done sweep. Timers
 * are unref'd: a job alone never keeps a process alive.
 */
export class PeriodicJob<T = unknown> {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = true;

  constructor(
    private readonly work: () => Promise<T>,
    private readonly opts: {
      intervalMs: number;
      onError: (error: unknown) => void;
      delayAfter?(result: T | undefined): number;
    },
  ) {}

  /** The first run comes after `firstDelayMs` (an interval unless given). */
  start(firstDelayMs = this.opts.intervalMs): void {
    this.stopped = false;
    this.schedule(firstDelayMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delayMs = this.opts.intervalMs): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      let result: T | undefined;
      this.running = this.work()
        .then((value) => {
          result = value;
        })
        .catch((error: unknown) => this.opts.onError(error))
        .finally(() => this.schedule(this.opts.delayAfter?.(result) ?? this.opts.intervalMs));
    }, delayMs);
    this.timer.unref();
  }
}
