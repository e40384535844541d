import { createHash } from 'node:crypto';
import pg from 'pg';

/**
 * A pg client that runs every parameterised statement as a named prepared statement, so each
 * connection plans it once instead of on every call.
 *
 * Why it matters: the idempotency tables are range-partitioned by expiry, and a lookup by
 * (tenant, operation, key) cannot prune by expiry, so planning it means planning every
 * partition, which cost far more than executing it (see
 * docs/decisions/0006-pipelined-statements-on-pg-internals.md). Prepared, the plan is built
 * once per connection and reused.
 *
 * Failure modes, and why they do not bite here:
 * - PostgreSQL invalidates a cached plan when a table it uses changes (a partition created,
 *   attached, or dropped by retention), so the next call replans; no stale plan runs.
 * - A plan whose result columns change ("cached plan must not change result type") needs a
 *   schema change under a running process; migrations run before the gateway serves, and every
 *   statement names its columns.
 * - The name is a digest of the text, so two statements can never share a name, and a
 *   connection's cache holds one entry per distinct text: bounded by the code's statements.
 *   Text built at run time (DDL for partitions) carries no parameters and is sent unprepared.
 * - A new connection (after a backend kill, say) starts with no statements and prepares them
 *   again on first use.
 */
export function preparingClientClass(base: typeof pg.Client = pg.Client): typeof pg.Client {
  const names = new Map<string, string>();
  const nameOf = (text: string): string => {
    let name = names.get(text);
    if (name === undefined) {
      name = `s_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
      names.set(text, name);
    }
    return name;
  };

  class PreparingClient extends base {
    /** The name `text` is prepared under on every connection (batching-transaction.ts). */
    statementName(text: string): string {
      return nameOf(text);
    }

    // pg's query() is heavily overloaded; this forwards every form unchanged except
    // (text, values[], callback?), which becomes a named QueryConfig.
    override query(...args: unknown[]): never {
      const [config, values, callback] = args;
      const forward = (base.prototype.query as (...a: unknown[]) => never).bind(this);
      if (typeof config === 'string' && Array.isArray(values)) {
        const named = { name: nameOf(config), text: config, values };
        return callback === undefined ? forward(named) : forward(named, callback);
      }
      return forward(...args);
    }
  }
  return PreparingClient;
}
