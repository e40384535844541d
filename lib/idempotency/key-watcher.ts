import { connectionFor } from '../db/primary-client.ts';
import type pg from 'pg';
import type { Logger } from '../logging/logger.ts';

/** The channel migrations/0011-key-waiters.sql notifies on: the payload is a key row's id. */
export const KEY_SETTLED_CHANNEL = 'idempotency_key_settled';

/** How a wait for a key row ended. */
export type WakeReason =
  /** The row left its owner's hands (committed): read it again. */
  | 'notified'
  /** The listening connection was replaced: a notification may have been missed, read again. */
  | 'recheck'
  | 'timeout';

/** One waiter's subscription to a key row, taken before the row is marked. */
export interface KeySubscription {
  /** Resolves on the row's notification, a listener reconnect, or after `ms`. */
  next(ms: number): Promise<WakeReason>;
  cancel(): void;
}

/** Backoff between attempts to listen again after the connection was lost. */
const RELISTEN_DELAYS_MS = [0, 100, 500, 2_000] as const;
/**
 * How long connecting and LISTEN may take. pg's defaults wait for ever: a primary that accepts
 * connections and never answers (stalled, or behind a route that drops replies) would hold
 * `listening()`, every waiter, and every attempt to listen again.
 */
const LISTEN_TIMEOUT_MS = 5_000;
/**
 * TCP keepalive's idle time on the listening connection, which is idle between notifications by
 * design: a peer that vanished without a reset is found dead by the kernel, the connection
 * ends, and the waiters re-read their rows instead of sleeping until their timers run out.
 */
const LISTEN_KEEPALIVE_IDLE_MS = 10_000;

/**
 * The process's one listening connection for key waits (`Prefer: wait`). A waiter subscribes
 * to a row id, makes sure LISTEN is in effect (`listening`), and only then marks the row, so a
 * notification sent at any moment after the mark reaches it. When the connection is lost (a
 * killed backend, a failover), every waiter is woken with `recheck` as soon as LISTEN is in
 * effect again: a notification sent while nobody listened is gone, so each re-reads its row.
 * Connects on the first wait, not at start: a gateway nobody asks to wait holds no connection.
 */
export class KeyWatcher {
  private readonly subscribers = new Map<string, Set<(reason: WakeReason) => void>>();
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly opts: {
      connectionString: string;
      applicationName: string;
      log: Logger;
    },
  ) {}

  /** Resolves once LISTEN is in effect; rejects when the database cannot be reached now. */
  listening(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('key watcher closed'));
    if (this.client !== null) return Promise.resolve();
    this.connecting ??= this.listen().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  subscribe(rowId: string): KeySubscription {
    let wake: ((reason: WakeReason) => void) | null = null;
    let woken: WakeReason | null = null;
    const onWake = (reason: WakeReason) => {
      if (wake !== null) wake(reason);
      else woken ??= reason;
    };
    const set = this.subscribers.get(rowId) ?? new Set();
    set.add(onWake);
    this.subscribers.set(rowId, set);
    const cancel = () => {
      set.delete(onWake);
      if (set.size === 0 && this.subscribers.get(rowId) === set) this.subscribers.delete(rowId);
    };
    return {
      next: (ms) => {
        if (woken !== null) {
          const reason = woken;
          woken = null;
          return Promise.resolve(reason);
        }
        return new Promise<WakeReason>((resolve) => {
          const timer = setTimeout(() => settle('timeout'), Math.max(0, ms));
          const settle = (reason: WakeReason) => {
            clearTimeout(timer);
            wake = null;
            resolve(reason);
          };
          wake = settle;
        });
      },
      cancel,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = null;
    this.wakeAll('recheck');
    await client?.end().catch(() => undefined);
  }

  private async listen(): Promise<void> {
    // NOTIFY is only ever sent on the primary: on a URL with several hosts, listen there.
    const { config, Client } = connectionFor(this.opts.connectionString, {
      applicationName: this.opts.applicationName,
    });
    const client = new Client({
      ...config,
      application_name: this.opts.applicationName,
      connectionTimeoutMillis: LISTEN_TIMEOUT_MS,
      query_timeout: LISTEN_TIMEOUT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: LISTEN_KEEPALIVE_IDLE_MS,
    });
    // A lost connection (terminated backend, network) is an 'error' and an 'end'; both lead to
    // one relisten. Unhandled, 'error' would crash the process.
    client.on('error', () => undefined);
    client.on('notification', (message) => {
      if (message.channel !== KEY_SETTLED_CHANNEL || message.payload === undefined) return;
      for (const wake of this.subscribers.get(message.payload) ?? []) wake('notified');
    });
    client.once('end', () => {
      if (this.client !== client) return;
      this.client = null;
      if (!this.closed) void this.relisten();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${KEY_SETTLED_CHANNEL}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
  }

  /** After a lost connection: listen again, then have every waiter re-read its row. */
  private async relisten(): Promise<void> {
    for (const delay of RELISTEN_DELAYS_MS) {
      if (this.closed) return;
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      try {
        await this.listening();
        this.opts.log.info({ msg: 'key watcher listening again' });
        this.wakeAll('recheck');
        return;
      } catch (error) {
        this.opts.log.warn({ msg: 'key watcher cannot listen', err: error });
      }
    }
    // Still down: waiters re-read now (and find the database down, or answer in_use); the next
    // wait connects anew.
    this.wakeAll('recheck');
  }

  private wakeAll(reason: WakeReason): void {
    for (const set of this.subscribers.values()) for (const wake of set) wake(reason);
  }
}
