import type { JsonValue } from '../canonical-json.ts';
import type { Statement } from '../db/pipelined-statements.ts';
import type { TxClient } from '../db/pool.ts';

/**
 * The phase that admission commits: the request's first recovery point and its first work,
 * given one of two ways.
 */
export type FirstPhase = {
  /** The recovery point the request stands at once admission commits. */
  to: string;
  /** The resource this request creates (the payment id): where a resumer finds its work. */
  resourceId: string;
} & (
  | {
      /**
       * The first phase's work, started once the key is ours and committed in the admission
       * transaction (withTransaction: the key's INSERT, then the work's round trips, then
       * COMMIT on its own). It may decide the request there and then (a business-rule
       * refusal): the key finishes with that answer, stored and replayed like any other.
       * Throwing an error instead stores nothing.
       */
      work: (tx: TxClient) => Promise<void | { decided: JsonValue }>;
    }
  | {
      /**
       * The first phase as statements, sent with the scope lock and the key's INSERT as one
       * transaction in one round trip (withOneRoundTrip). They run only if the key is admitted:
       * INSERT_KEY fails otherwise, and PostgreSQL skips them. Any condition they depend on
       * must fail its own statement (failed-checks.ts). Their answers come back with `owned`.
       */
      statements: Statement[];
    }
);
