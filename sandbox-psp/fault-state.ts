// Per-key bookkeeping for the failure-mode tokens. Each mode depends on what already happened
// to a key (how many 503s it got, whether its one hang was spent, when its blackhole lifts),
// so the state lives here, keyed by Idempotency-Key, on the server instance.

/** pm_card_unavailable answers 503 this many times per key before it lets a charge through. */
export const UNAVAILABLE_ATTEMPTS_BEFORE_SUCCESS = 2;

export interface FaultState {
  /** Counts one pm_card_unavailable attempt and says whether it must still get a 503. */
  nextUnavailableAttemptFails(idempotencyKey: string): boolean;
  /** True exactly once per key: the capture/void/refund attempt on a pm_card_unavailable
   * charge that must get a 503 before the operation goes through. */
  claimOperationOutage(idempotencyKey: string): boolean;
  /** True exactly once per key: the pm_card_timeout attempt that must hang. */
  claimTimeoutHang(idempotencyKey: string): boolean;
  startBlackhole(blackhole: { idempotencyKey: string; reference: string; untilMs: number }): void;
  /** Epoch ms until which calls for this key must hang, or undefined when none is active. */
  keyBlackholeUntil(idempotencyKey: string, nowMs: number): number | undefined;
  /** Latest active blackhole among the reference's keys: a listing would reveal them all. */
  referenceBlackholeUntil(reference: string, nowMs: number): number | undefined;
}

export function createFaultState(): FaultState {
  const unavailableAttempts = new Map<string, number>();
  const spentTimeoutHangs = new Set<string>();
  const spentOperationOutages = new Set<string>();
  const blackholes = new Map<string, { reference: string; untilMs: number }>();

  return {
    nextUnavailableAttemptFails(idempotencyKey) {
      const attempt = (unavailableAttempts.get(idempotencyKey) ?? 0) + 1;
      unavailableAttempts.set(idempotencyKey, attempt);
      return attempt <= UNAVAILABLE_ATTEMPTS_BEFORE_SUCCESS;
    },
    claimOperationOutage(idempotencyKey) {
      if (spentOperationOutages.has(idempotencyKey)) return false;
      spentOperationOutages.add(idempotencyKey);
      return true;
    },
    claimTimeoutHang(idempotencyKey) {
      if (spentTimeoutHangs.has(idempotencyKey)) return false;
      spentTimeoutHangs.add(idempotencyKey);
      return true;
    },
    startBlackhole({ idempotencyKey, reference, untilMs }) {
      blackholes.set(idempotencyKey, { reference, untilMs });
    },
    keyBlackholeUntil(idempotencyKey, nowMs) {
      const blackhole = blackholes.get(idempotencyKey);
      return blackhole !== undefined && blackhole.untilMs > nowMs ? blackhole.untilMs : undefined;
    },
    referenceBlackholeUntil(reference, nowMs) {
      let latest: number | undefined;
      for (const blackhole of blackholes.values()) {
        if (blackhole.reference !== reference || blackhole.untilMs <= nowMs) continue;
        latest = Math.max(latest ?? 0, blackhole.untilMs);
      }
      return latest;
    },
  };
}
