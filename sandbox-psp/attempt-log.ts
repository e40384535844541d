// Counts POST /v1/charges requests as they arrive, whatever becomes of them (rejections, 503s,
// replays, hangs). Tests use it to prove the gateway retried exactly as often as it should.

export interface AttemptFilter {
  reference?: string;
  idempotencyKey?: string;
}

export interface AttemptLog {
  /** `null` fields mean the request did not carry a usable key or reference. */
  record(attempt: { idempotencyKey: string | null; reference: string | null }): void;
  count(filter?: AttemptFilter): number;
}

export function createAttemptLog(): AttemptLog {
  const attempts: { idempotencyKey: string | null; reference: string | null }[] = [];
  return {
    record(attempt) {
      attempts.push({ ...attempt });
    },
    count(filter) {
      return attempts.filter(
        (a) =>
          (filter?.reference === undefined || a.reference === filter.reference) &&
          (filter?.idempotencyKey === undefined || a.idempotencyKey === filter.idempotencyKey),
      ).length;
    },
  };
}
