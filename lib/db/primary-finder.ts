import pg from 'pg';
import type { DatabaseUrl, Endpoint } from './database-url.ts';
import { sqlState } from './sql-state.ts';

/**
 * Which of DATABASE_URL's hosts is the writable primary, found the way libpq's
 * target_session_attrs=read-write finds it, and found again after a failover.
 *
 * A connection is writable when the server is not in recovery (a standby is) and its
 * transaction_read_only is off. The second check matters: a primary being demoted by its
 * manager (pg_auto_failover, Patroni) still says it is not in recovery for a moment, but
 * already refuses writes with 25006.
 *
 * Failure modes:
 * - No host answers as primary (mid-failover: the old one is gone, the new one not yet
 *   promoted). locate() keeps asking, a few times a second, until FIND_DEADLINE_MS; the
 *   requests waiting for a connection meanwhile wait in the pool's queue, which has its own
 *   timeout, and fail as a transient database error if no primary appears in time.
 * - The primary moves while connections to it are open. They die with 57P01 (the manager
 *   stops the old primary) or answer 25006; either is a signal (isPrimaryLost) that forgets
 *   the cached primary, so the next connection asks again. A connection never moves: pg
 *   drops it and opens another.
 * - A host that accepts and never answers (a black hole). Every probe has a timeout, so a dead
 *   host costs a probe's timeout, not a hang.
 * - Two hosts both claim to be writable (a split brain the manager failed to prevent). The
 *   first in URL order wins, as in libpq; the manager's fencing is what prevents the other.
 */
export class PrimaryFinder {
  private current: Endpoint | undefined;
  private finding: Promise<Endpoint> | undefined;

  constructor(
    private readonly url: DatabaseUrl,
    private readonly opts: { applicationName?: string; probeTimeoutMs?: number } = {},
  ) {}

  /** The primary: the one last found, or a fresh search. */
  locate(): Promise<Endpoint> {
    if (this.current !== undefined) return Promise.resolve(this.current);
    this.finding ??= this.find().finally(() => {
      this.finding = undefined;
    });
    return this.finding;
  }

  /** forget(), for a connection that knows only its host and port. */
  forgetHost(endpoint: Endpoint): void {
    if (this.current?.host === endpoint.host && this.current.port === endpoint.port) {
      this.current = undefined;
    }
  }

  /** Whether `endpoint` is still the primary as far as this finder knows. */
  isCurrent(endpoint: Endpoint): boolean {
    return this.current === endpoint;
  }

  /** A connection to `endpoint` proved it is no longer the primary: ask again next time. */
  forget(endpoint: Endpoint): void {
    if (this.current === endpoint) this.current = undefined;
  }

  /** pg's settings for a connection to `endpoint`. */
  configFor(endpoint: Endpoint): pg.ClientConfig {
    return this.url.configFor(endpoint);
  }

  private async find(): Promise<Endpoint> {
    const deadline = Date.now() + FIND_DEADLINE_MS;
    for (;;) {
      // All hosts at once, so a dead host costs one probe timeout, not one per host before it.
      const answers = await Promise.all(this.url.endpoints.map((e) => this.probe(e)));
      const primary = this.url.endpoints.find((_, i) => answers[i] === 'writable');
      if (primary !== undefined) {
        this.current = primary;
        return primary;
      }
      if (Date.now() >= deadline) throw new NoPrimaryError(this.url.endpoints, answers);
      await new Promise((resolve) => setTimeout(resolve, FIND_RETRY_MS));
    }
  }

  /** 'writable', 'read-only', or why the host could not be asked. */
  private async probe(endpoint: Endpoint): Promise<string> {
    const timeout = this.opts.probeTimeoutMs ?? PROBE_TIMEOUT_MS;
    const client = new pg.Client({
      ...this.url.configFor(endpoint),
      application_name: this.opts.applicationName,
      connectionTimeoutMillis: timeout,
      query_timeout: timeout,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const { rows } = await client.query<WritableRow>(WRITABLE_CHECK);
      return isWritable(rows[0]) ? 'writable' : 'read-only';
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    } finally {
      void client.end().catch(() => undefined);
    }
  }
}

/** How long one host may take to answer a probe. */
const PROBE_TIMEOUT_MS = 2_000;
/** A search goes on this long (a failover takes seconds) before it gives up. */
const FIND_DEADLINE_MS = 15_000;
const FIND_RETRY_MS = 250;

export const WRITABLE_CHECK = `SELECT pg_is_in_recovery() AS in_recovery, current_setting('transaction_read_only') AS read_only`;

export interface WritableRow {
  in_recovery: boolean;
  read_only: string;
}

export function isWritable(row: WritableRow | undefined): boolean {
  return row !== undefined && !row.in_recovery && row.read_only === 'off';
}

/** No host of DATABASE_URL answered as a writable primary before the search gave up. */
export class NoPrimaryError extends Error {
  /** SQLSTATE 08001 (sqlclient_unable_to_establish_sqlconnection), as libpq would report it. */
  readonly code = '08001';

  constructor(endpoints: Endpoint[], answers: string[]) {
    super(
      `no writable primary among ${endpoints
        .map((e, i) => `${e.host}:${e.port} (${answers[i] ?? 'not asked'})`)
        .join(', ')}`,
    );
  }
}

/**
 * An error that says the primary this connection reached is gone or no longer takes writes:
 * the server shut down or was terminated (57P01–57P03), the connection failed (class 08), the
 * server refuses writes (25006), or the socket failed. pg reports a connection that ended or
 * timed out with no code at all, so for those alone the message is what there is to go on.
 */
export function isPrimaryLost(error: unknown): boolean {
  const code = sqlState(error);
  if (code !== undefined && SOCKET_ERRORS.has(code)) return true;
  if (code !== undefined && /^[0-9A-Z]{5}$/.test(code)) {
    return code === '25006' || code.startsWith('08') || /^57P0[123]$/.test(code);
  }
  if (!(error instanceof Error)) return false;
  // knex, under the ORM and the migrator, puts the statement before pg's words:
  // `select 1 from pg_database where … - Connection terminated unexpectedly`.
  const knexed = error.message.lastIndexOf(KNEX_SEPARATOR);
  const words = knexed < 0 ? error.message : error.message.slice(knexed + KNEX_SEPARATOR.length);
  return PG_CONNECTION_MESSAGES.test(words);
}

const KNEX_SEPARATOR = ' - ';

const SOCKET_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH']);
/** pg's own words for a connection that ended or never came (pg-pool's checkout timeout too). */
const PG_CONNECTION_MESSAGES =
  /^(Connection terminated|Query read timeout|timeout expired|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable)/;
