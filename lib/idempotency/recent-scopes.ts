/**
 * The scopes this process has admitted or found taken lately: whether a request's key is
 * likely to be a retry, which decides what admission sends first (engine.ts), and the key
 * reference its log lines carry.
 *
 * A key this process has not met is most likely new: admission then inserts at once, and reads
 * only if the insert finds the key taken. A key it has met (a client's retry that came back
 * to the same gateway, a duplicate of a request admitted here) is read first, which answers a
 * replay or a conflict without a transaction. Either way the database decides: this memory only
 * picks the cheaper first statement, and a wrong guess costs one round trip, never a second
 * effect. It forgets the oldest scopes first and holds at most twice `capacity` of them.
 *
 * The key reference (scope-identity.ts) is an HMAC, which costs a request more than the rest of
 * its log line: a retry of a scope met lately is logged with the one computed for it the first
 * time. The keyring's first key cannot change in a running process (it is read at start), so
 * the remembered reference is the one an HMAC would give again.
 */
export class RecentScopes {
  /** Scopes met since `previous` filled up, each with its key reference once known. */
  private current = new Map<string, string | undefined>();
  private previous = new Map<string, string | undefined>();

  constructor(private readonly capacity: number = DEFAULT_RECENT_SCOPES) {
    if (!(capacity >= 1)) throw new Error(`RecentScopes needs a capacity of 1 at least`);
  }

  has(scope: string): boolean {
    return this.current.has(scope) || this.previous.has(scope);
  }

  /** The key reference remembered for a scope met lately, if any. */
  keyRefOf(scope: string): string | undefined {
    return this.current.get(scope) ?? this.previous.get(scope);
  }

  /** Notes `scope` as met, now, with its key reference when the caller has it. */
  remember(scope: string, keyRef?: string): void {
    const known = keyRef ?? this.keyRefOf(scope);
    if (this.current.has(scope)) {
      if (known !== undefined) this.current.set(scope, known);
      return;
    }
    if (this.current.size >= this.capacity) {
      this.previous = this.current;
      this.current = new Map();
    }
    this.current.set(scope, known);
  }
}

/**
 * Scopes per generation. A retry that arrives after this many other keys have come through the
 * same process is taken for a new request: its insert fails, and it is answered after one more
 * round trip. Each remembered scope is a string of about 100 bytes, and its key reference 12.
 */
export const DEFAULT_RECENT_SCOPES = 20_000;
