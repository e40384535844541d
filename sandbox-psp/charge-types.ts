// Shapes shared by the sandbox provider's files. The Charge shape is the provider's public
// contract: the gateway's provider adapter parses exactly these fields.

export type ChargeStatus = 'authorized' | 'captured' | 'declined' | 'voided';

export interface Charge {
  id: string;
  /** Decimal string exactly as the caller sent it, e.g. "10.50". */
  amount: string;
  currency: string;
  status: ChargeStatus;
  amountCaptured: string;
  amountRefunded: string;
  reference: string;
  idempotencyKey: string;
  /** ISO-8601 instant at which the charge was recorded in the provider's books (see
   * charge-store.ts): never earlier than the moment the charge became visible to anyone. */
  createdAt: string;
  failureCode: string | null;
  paymentMethod: string;
}

/** A charge not yet recorded. Only the store stamps createdAt, at insertion, so a charge that
 * is still being processed (pm_card_slow) cannot carry a time from before it existed. */
export type ChargeDraft = Omit<Charge, 'createdAt'>;

/** A validated POST /v1/charges body. These five fields are what an Idempotency-Key binds. */
export interface ChargeRequest {
  amount: string;
  currency: string;
  paymentMethod: string;
  reference: string;
  capture: boolean;
}

/** A response the provider has decided to give; `headers` are added to the JSON content type. */
export interface JsonAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}
