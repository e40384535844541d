// Shapes of the operations on an existing charge (capture, void, refund). Like Charge, the
// Refund shape is the provider's public contract: the gateway's adapter parses these fields.

export type OperationKind = 'capture' | 'void' | 'refund';

/** A validated operation request. Every field, kind and chargeId included, is what an
 * Idempotency-Key binds: the same key on another charge or for another operation is a mismatch. */
export type OperationRequest =
  | { kind: 'capture'; chargeId: string; amount: string }
  | { kind: 'void'; chargeId: string }
  | { kind: 'refund'; chargeId: string; amount: string; reason: string | null };

export interface Refund {
  id: string;
  chargeId: string;
  /** Written with the charge's number of decimals, e.g. "1.00" on a "10.00" charge. */
  amount: string;
  status: 'succeeded';
  reason: string | null;
  idempotencyKey: string;
  /** ISO-8601 instant at which the refund was recorded, from the books clock. */
  createdAt: string;
}

export type SettlementKind = 'capture' | 'void';

/** An applied capture or void, as its probe answers it (GET /v1/captures/by-idempotency-key/…,
 * /v1/voids/by-idempotency-key/…). */
export interface Settlement {
  id: string;
  kind: SettlementKind;
  chargeId: string;
  /** A capture's amount at the charge's scale; null for a void. */
  amount: string | null;
  idempotencyKey: string;
  createdAt: string;
}

/** A refund not yet recorded; the store stamps createdAt. */
export type RefundDraft = Omit<Refund, 'createdAt'>;

/** One operation request that reached the provider's decision, whatever it answered. */
export interface OperationAttempt {
  kind: OperationKind;
  idempotencyKey: string;
  /** True only for the one attempt per key that changed the books; replays, refusals, 503s
   * and mismatches are false. */
  applied: boolean;
}
