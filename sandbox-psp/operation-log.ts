// Records every capture/void/refund request that reached the provider's decision (applied,
// refused, replayed, mismatched or 503'd), so tests can count effects per charge and prove the
// gateway neither skipped nor repeated one. Requests turned away before that (missing key,
// unreadable or malformed body) are not recorded; an amount with more decimals than its
// charge is, since only the charge can tell.
import type { OperationAttempt } from './operation-types.ts';

export interface OperationFilter {
  chargeId?: string;
}

export interface OperationLog {
  record(attempt: OperationAttempt & { chargeId: string }): void;
  /** Copies of the recorded attempts, oldest first. */
  list(filter?: OperationFilter): OperationAttempt[];
}

export function createOperationLog(): OperationLog {
  const attempts: (OperationAttempt & { chargeId: string })[] = [];
  return {
    record(attempt) {
      attempts.push({ ...attempt });
    },
    list(filter) {
      return attempts
        .filter((a) => filter?.chargeId === undefined || a.chargeId === filter.chargeId)
        .map(({ kind, idempotencyKey, applied }) => ({ kind, idempotencyKey, applied }));
    },
  };
}
