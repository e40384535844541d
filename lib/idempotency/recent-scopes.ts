/**
 * The scopes this process has admitted or found taken lately: whether a request's key is
 * likely to be a retry, which decides what admission sends first (engine.ts).
 *
 * A key this process has not met is most likely new: admission then inserts at once, and reads
 * only if the insert finds the key taken. A key it has met (a client's retry that came back
 * to the same gateway, a duplicate of a request admitted here) is read first, which answers a
 * replay or a conflict without a transaction. Either way the database decides: this memory only
 * picks the cheaper first statement, and a wrong guess costs one round trip, never a second
 * effect. It forgets the oldest scopes first and holds at most twice `capacity` of them.
 */
export class RecentScopes {
  /** Scopes met since `previous` filled up; `previous` is the generation before. */
  private current = new Set<string>();
  private previous = new Set<string>();

  constructor(private readonly capacity: number = DEFAULT_RECENT_SCOPES) {
    if (!(capacity >= 1)) throw new Error(`RecentScopes needs a capacity of 1 at least`);
  }

  has(scope: string): boolean {
    return this.current.has(scope) || this.previous.has(scope);
  }

  remember(scope: string): void {
    if (this.current.has(scope)) return;
    if (this.current.size >= this.capacity) {
      this.previous = this.current;
      this.current = new Set();
    }
    this.current.add(scope);
  }
}

/**
 * Scopes per generation. A retry that arrives after this many other keys have come through the
 * same process is taken for a new request: its insert fails, and it is answered after one more
 * round trip. Each remembered scope is a string of about 100 bytes.
 */
export const DEFAULT_RECENT_SCOPES = 20_000;
