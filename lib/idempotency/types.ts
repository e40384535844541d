import type { AdmissionsInFlight } from './admissions-in-flight.ts';
import type { RecentScopes } from './recent-scopes.ts';
import type { KeyWatcher } from './key-watcher.ts';
import type pg from 'pg';
import type { JsonValue } from '../canonical-json.ts';
import type { Keyring } from '../crypto/keyring.ts';
import type { FaultPoints } from '../faults.ts';
import type { Logger } from '../logging/logger.ts';
import type { RequestTrace } from '../logging/request-trace.ts';
import type { LibMetrics } from '../metrics.ts';
import type { OperationDef } from './operation.ts';

export interface EngineDeps {
  pool: pg.Pool;
  faults: FaultPoints;
  metrics: LibMetrics;
  /** The request's logger when `trace` is set (IdempotencyEngine.forTrace), else the process's. */
  log: Logger;
  /**
   * The request this engine works for, or null for the process-wide engine (background jobs):
   * admission adds the tenant, operation and key reference to it.
   */
  trace: RequestTrace | null;
  /** How long an owner may hold a request without advancing it before others may take over. */
  leaseMs: number;
  /** The replay window: how long a key is remembered (advertised as `expiresAt`). */
  ttlSeconds: number;
  /**
   * Stored answers larger than this (bytes of JSON) are stored as a reference to the request's
   * resource, which a replay renders afresh: the key table must not become a blob store.
   */
  answerMaxBytes: number;
  /** Attempts ending in a timeout before a request becomes 'unknown' and awaits reconciliation. */
  unknownAfterAttempts: number;
  /** The recovery worker's backoff between attempts: base × 2^attempts, capped. */
  backoffBaseMs: number;
  backoffCapMs: number;
  /** Keys request hashes and seals stored answers (the first key); opens what any key sealed. */
  keyring: Keyring;
  /** Wakes requests that wait for a key in flight (Prefer: wait); null: none ever waits. */
  keyWatcher: KeyWatcher | null;
  /** This process's admissions in flight: its duplicates wait for them instead of racing. */
  admissions: AdmissionsInFlight;
  /** The scopes this process met lately: a key it has not met is inserted before it is read. */
  recentScopes: RecentScopes;
}

export interface Scope {
  tenantId: string;
  operation: OperationDef;
  key: string;
}

/**
 * A finished request's answer as stored: the body exactly as first computed, in the shape of
 * `version` (which may be older than the operation's current one; see stored-answer.ts), or
 * a reference to `resourceId` when the body was over the size cap.
 */
export type StoredAnswer = {
  version: number;
  resourceId: string | null;
  firstRequestAt: Date;
  expiresAt: Date;
} & ({ storedAs: 'inline'; body: JsonValue } | { storedAs: 'reference'; body: null });

export interface KeyRow {
  id: string;
  /** The operation id the row was admitted under: the current one, or an earlier version's. */
  operation: string;
  request_hash: Buffer;
  /** The data key the hash was keyed by; null for a plain SHA-256 written before keyed hashes. */
  request_hash_key: string | null;
  state: 'started' | 'unknown' | 'finished';
  recovery_point: string;
  resource_id: string | null;
  fencing_token: string;
  /** The lease as the engine reads it: by the database's clock, never this process's. */
  lease_expired: boolean;
  lease_remaining_seconds: number | null;
  /** Finished and past its replay window: a retry now is a new request. */
  expired: boolean;
  /**
   * The answer as stored before 0026: a JSON string holding a sealed envelope, or (written before
   * sealing) the answer itself. Null when it is in response_sealed.
   */
  response: JsonValue | null;
  /** The answer sealed in the envelope's binary form (0026). */
  response_sealed: Buffer | null;
  response_version: number | null;
  response_stored_as: 'inline' | 'reference' | null;
  created_at: Date;
  expires_at: Date;
  /**
   * Whether the row needs no proof before a final answer is given from it: read on a primary
   * with no synchronous standby (WITHOUT_SYNCHRONOUS_STANDBY). With one, a visible commit may
   * sit on the primary alone, and a replay proves it replicated first (engine.ts).
   */
  durable_as_read: boolean;
}

export interface OwnedRow {
  /** With expires_at, the row's primary key: an owner's statements name its partition. */
  id: string;
  fencing_token: string;
  /**
   * The operation id the row was admitted under. The owner's fenced writes name it, and its
   * answer is sealed to it, whatever version of the operation this process runs.
   */
  operation: string;
  recovery_point: string;
  resource_id: string | null;
  created_at: Date;
  expires_at: Date;
}
