/**
 * The admissions this process has sent and not yet seen settle, by scope.
 *
 * A request that finds no row for its key while another request in this process is admitting
 * the same scope waits for that admission to settle and reads the key again. Without this, every
 * duplicate of a storm sends its own admission transaction: it queues on the scope lock while
 * holding a pooled connection, then fails its INSERT and rolls back, only to read the row and
 * answer in_use. With it, a duplicate in flight costs one indexed read.
 *
 * The database still decides every race. This only keeps a process from sending transactions it
 * already knows will lose; duplicates arriving at other processes take the ordinary path, and a
 * leader's admission that fails (lost to another process, or an error) lets its followers read
 * again and try for themselves.
 */
export class AdmissionsInFlight {
  private readonly settling = new Map<string, Promise<void>>();

  /** Settles when the admission in flight for `scope` does; undefined when there is none. */
  pending(scope: string): Promise<void> | undefined {
    return this.settling.get(scope);
  }

  /** Runs `admit` as this process's admission of `scope`, seen by `pending` until it settles. */
  async run<T>(scope: string, admit: () => Promise<T>): Promise<T> {
    let settle!: () => void;
    this.settling.set(scope, new Promise<void>((resolve) => (settle = resolve)));
    try {
      return await admit();
    } finally {
      this.settling.delete(scope);
      settle();
    }
  }
}
