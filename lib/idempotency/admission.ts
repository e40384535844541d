import type pg from 'pg';
import type { OwnedRequest } from './owned-request.ts';
import type { StoredAnswer } from './types.ts';

/**
 * What admitting a keyed request came to (IdempotencyEngine.admit): this request owns the key,
 * new or taken over from a dead owner; or the key answers for itself (a replay, a stored
 * refusal), is held by a live owner (in_use), has an outcome nobody knows yet (unknown), or
 * names another request (reused).
 */
export type Admission =
  | {
      kind: 'owned';
      request: OwnedRequest;
      via: 'new';
      /** The answers to the first phase's statements (none when it was given as work). */
      answers: pg.QueryResult[];
    }
  | { kind: 'owned'; request: OwnedRequest; via: 'takeover' }
  | { kind: 'replay'; answer: StoredAnswer }
  | { kind: 'in_use'; retryAfterSeconds: number; resourceId: string | null }
  | { kind: 'unknown'; retryAfterSeconds: number; resourceId: string | null }
  | { kind: 'decided'; answer: StoredAnswer }
  | { kind: 'reused' };
