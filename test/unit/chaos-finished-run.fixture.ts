/**
 * A small finished chaos run, written down the way the harness records one: the plan
 * (plan.ts), the clients' journal (chaos-client-answers.fixture.ts), the gateway's tables and
 * the provider's books in snapshot.ts's shapes, and the webhook sink's deliveries. Each step
 * writes every trace the real one leaves (key, rows, provider books, ledger, event, webhook,
 * answer), so the whole agrees with itself and the auditor finds nothing; a test then plants
 * one violation in a fresh copy. The steps follow the engine's effects, not its rules: a refund
 * past what is refundable goes through if a test asks for one.
 */
import type { Payment } from '../../packages/client/src/index.ts';
import { Journal, type FinalRecord } from '../chaos/journal.ts';
import { formatMinor, type CreateOp, type PlannedOp, type TenantName } from '../chaos/plan.ts';
import type { PaymentRow, ProviderCharge, Snapshot } from '../chaos/snapshot.ts';
import type { WebhookDelivery } from '../chaos/webhook-sink.ts';
import { paymentView, refusalAnswer, resultAnswer } from './chaos-client-answers.fixture.ts';

/** What `audit()` takes. */
export interface FinishedRun {
  journal: Journal;
  snapshot: Snapshot;
  webhooks: WebhookDelivery[];
  crashes: Array<{ exit: string; logFile: string }>;
}

/** A create's payment, for the steps that act on it. */
export interface PaymentHandle {
  op: CreateOp & PlannedOp;
  row: PaymentRow;
  charge: ProviderCharge;
}

/** A create's payment that has no charge at the provider. */
export type ChargelessPayment = Omit<PaymentHandle, 'charge'>;

type CreateInput = {
  tenant: TenantName;
  amountMinor: number;
  currency: 'EUR' | 'USD' | 'JPY';
  token: 'pm_card_visa' | 'pm_card_mastercard' | 'pm_card_declined';
  captureMethod: 'AUTOMATIC' | 'MANUAL';
  replays?: number;
};

const SEED = 7;
/** The gateway's operation ids, spelled here rather than taken from the auditor: a drift shows. */
const OPERATION_IDS = {
  create: 'payments.create.v1',
  capture: 'payments.capture.v1',
  refund: 'payments.refund.v1',
  cancel: 'payments.cancel.v1',
} as const;

/** UUIDs (derived provider keys take nothing else) that say which they are in their last digits. */
/**
 * A provider key in the shape the payments service derives (services/payments/provider-keys.ts):
 * the auditor only matches them against each other, so any stable, distinct string per effect
 * will do.
 */
export function providerChargeKey(paymentId: string): string {
  return `provider_payment_${paymentId}`;
}

export function providerOperationKey(kind: 'capture' | 'void' | 'refund', operationId: string) {
  return `provider_${kind}_${operationId}`;
}

export function uuid(n: number): string {
  return `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
}

export class FinishedRunBuilder {
  readonly snapshot: Snapshot = {
    tenantIds: { a: uuid(9001), b: uuid(9002) },
    payments: [],
    operations: [],
    keys: [],
    postings: [],
    receipts: [],
    events: [],
    deliveries: [{ status: 'delivered', consumer: 'webhook', n: 1 }],
    interventions: [],
    charges: [],
    refunds: [],
  };
  readonly webhooks: WebhookDelivery[] = [];
  private readonly plan: PlannedOp[] = [];
  private readonly finals = new Map<number, FinalRecord[]>();
  private nextId = 1;

  /** A createPayment: approved by the provider unless the token is pm_card_declined. */
  create(input: CreateInput): PaymentHandle {
    const op = this.planCreate(input);
    const row = paymentRow({ op, id: uuid(this.nextId++), tenantId: this.tenantId(op.tenant) });
    const charge = chargeOf({ op, row });
    this.snapshot.payments.push(row);
    this.snapshot.charges.push(charge);
    this.key({ op, resourceId: row.id });
    const payment = { op, row, charge };
    if (row.amount_captured_minor !== '0') this.postCapture(payment);
    const event =
      row.status === 'FAILED' ? 'failed' : row.status === 'SUCCEEDED' ? 'succeeded' : 'authorized';
    this.publish({ payment, id: `evt_payment_${row.id}_${event}`, type: `payment.${event}` });
    this.answer({ op, payload: { payment: this.view(payment) } });
    return payment;
  }

  /**
   * A createPayment whose charge request never reached the provider, whatever its token: its
   * outcome was unknown until reconciliation found no charge under its key in the provider's
   * final books (reconcile-payments.ts). The payment ends FAILED/PROVIDER_CHARGE_ABSENT with no
   * provider reference, its key finished with that answer, a payment.failed event and its
   * webhook, the settlement's intervention; no charge at the provider, no posting, no receipt.
   */
  createChargeAbsent(input: CreateInput): ChargelessPayment {
    const op = this.planCreate(input);
    const id = uuid(this.nextId++);
    const row: PaymentRow = {
      ...paymentRow({ op, id, tenantId: this.tenantId(op.tenant) }),
      status: 'FAILED',
      amount_captured_minor: '0',
      provider_reference: null,
      failure_code: 'PROVIDER_CHARGE_ABSENT',
    };
    this.snapshot.payments.push(row);
    this.key({ op, resourceId: row.id });
    const payment = { op, row };
    this.publish({ payment, id: `evt_payment_${row.id}_failed`, type: 'payment.failed' });
    this.intervention('reconciled_charge_absent');
    this.answer({ op, payload: { payment: this.view(payment) } });
    return payment;
  }

  /** A capture of all that was authorised. */
  capture(target: PaymentHandle): void {
    const { op, operationId } = this.followUp({ kind: 'capture', target, amountMinor: null });
    const { row, charge } = target;
    row.status = 'SUCCEEDED';
    row.amount_captured_minor = row.amount_minor;
    charge.status = 'captured';
    charge.amountCaptured = charge.amount;
    this.operation({ target, id: operationId, kind: 'capture', amountMinor: row.amount_minor });
    this.postCapture(target);
    const event = { id: `evt_payment_${row.id}_captured`, type: 'payment.captured' };
    this.publish({ payment: target, ...event });
    this.answer({ op, payload: { payment: this.view(target) } });
  }

  /** A refund that succeeds at the provider. */
  refund(input: { target: PaymentHandle; amountMinor: number }): void {
    const { target } = input;
    const { op, operationId } = this.followUp({ kind: 'refund', ...input });
    const { row, charge } = target;
    const amount = String(input.amountMinor);
    row.amount_refunded_minor = String(BigInt(row.amount_refunded_minor) + BigInt(amount));
    charge.amountRefunded = formatMinor(Number(row.amount_refunded_minor), row.currency);
    this.operation({ target, id: operationId, kind: 'refund', amountMinor: amount });
    this.snapshot.refunds.push({
      id: `re_${op.index}`,
      chargeId: charge.id,
      amount: formatMinor(input.amountMinor, row.currency),
      idempotencyKey: providerOperationKey('refund', operationId),
    });
    this.post({ target, id: `ledger_refund_${operationId}`, kind: 'refund', amountMinor: amount });
    const event = { id: `evt_refund_${operationId}_succeeded`, type: 'refund.succeeded' };
    this.publish({ payment: target, ...event });
    const payment = this.view(target);
    const refund = payment.refunds.find((r) => r.id === operationId);
    this.answer({ op, payload: { refund, payment } });
  }

  /**
   * A follow-up refused at admission: the refusal is stored for its key, whose resource is the
   * operation id it would have had; no operation row, no provider call.
   */
  refuse(input: {
    kind: 'capture' | 'refund';
    target: PaymentHandle;
    amountMinor: number;
    code: 'INVALID_PAYMENT_STATE' | 'AMOUNT_EXCEEDS_CAPTURABLE' | 'AMOUNT_EXCEEDS_REFUNDABLE';
    replays?: number;
  }): void {
    const { op } = this.followUp(input);
    for (let send = 0; send <= op.replays; send++) {
      this.record(op, refusalAnswer({ op, code: input.code, send }));
    }
  }

  /** The payment as the API shows it now. */
  view(payment: ChargelessPayment): Payment {
    return paymentView({ row: payment.row, operations: this.snapshot.operations });
  }

  finish(): FinishedRun {
    const journal = new Journal(this.plan);
    for (const [index, finals] of this.finals) {
      journal.record(index).finals.push(...finals);
      journal.settle(index, 0);
    }
    return { journal, snapshot: this.snapshot, webhooks: this.webhooks, crashes: [] };
  }

  /** A create's plan entry. */
  private planCreate(input: CreateInput): CreateOp & PlannedOp {
    const index = this.plan.length;
    const op: CreateOp & PlannedOp = {
      ...input,
      index,
      kind: 'create',
      key: `c-${SEED}-${index}`,
      reference: `chaos-${SEED}-${index}`,
      sharedKeyWith: null,
      replays: input.replays ?? 0,
      copies: 1,
    };
    this.plan.push(op);
    return op;
  }

  /** A follow-up's plan entry and its key, which names the operation's id. */
  private followUp(input: {
    kind: 'capture' | 'refund';
    target: PaymentHandle;
    amountMinor: number | null;
    replays?: number;
  }): { op: PlannedOp; operationId: string } {
    const index = this.plan.length;
    const op: PlannedOp = {
      index,
      kind: input.kind,
      tenant: input.target.op.tenant,
      key: `${input.kind}-${SEED}-${index}`,
      target: input.target.op.index,
      amountMinor: input.amountMinor,
      foreign: false,
      early: false,
      replays: input.replays ?? 0,
      copies: 1,
    };
    this.plan.push(op);
    const operationId = uuid(this.nextId++);
    this.key({ op, resourceId: operationId });
    return { op, operationId };
  }

  private operation(input: {
    target: PaymentHandle;
    id: string;
    kind: 'capture' | 'refund';
    amountMinor: string;
  }): void {
    const { target, id, kind } = input;
    this.snapshot.operations.push({
      tenant_id: target.row.tenant_id,
      id,
      payment_id: target.row.id,
      kind,
      amount_minor: input.amountMinor,
      status: 'SUCCEEDED',
      provider_key: providerOperationKey(kind, id),
    });
  }

  private key(input: { op: PlannedOp; resourceId: string }): void {
    this.snapshot.keys.push({
      tenant_id: this.tenantId(input.op.tenant),
      operation: OPERATION_IDS[input.op.kind],
      key: input.op.key,
      state: 'finished',
      resource_id: input.resourceId,
    });
  }

  /** The capture's posting and the receipt its event leads to. */
  private postCapture(target: PaymentHandle): void {
    const { row } = target;
    const id = `ledger_payment_${row.id}_capture`;
    this.post({ target, id, kind: 'capture', amountMinor: row.amount_captured_minor });
    this.snapshot.receipts.push({ tenant_id: row.tenant_id, payment_id: row.id });
  }

  /** One entry: a capture credits the merchant and debits clearing, a refund the reverse. */
  private post(input: {
    target: PaymentHandle;
    id: string;
    kind: 'capture' | 'refund';
    amountMinor: string;
  }): void {
    const { row } = input.target;
    const { amountMinor: amount } = input;
    this.snapshot.postings.push({
      tenant_id: row.tenant_id,
      id: input.id,
      payment_id: row.id,
      kind: input.kind,
      currency: row.currency,
      debit_account: input.kind === 'capture' ? 'psp_clearing' : 'merchant_balance',
      credit_account: input.kind === 'capture' ? 'merchant_balance' : 'psp_clearing',
      amount_minor: amount,
    });
  }

  /**
   * The event and its webhook, carrying the payment as it is now. Every third event's first
   * delivery is refused, as the sink refuses some, and redelivered with the same payload.
   */
  private publish(input: { payment: ChargelessPayment; id: string; type: string }): void {
    const { op, row } = input.payment;
    this.snapshot.events.push({ tenant_id: row.tenant_id, id: input.id, type: input.type });
    const delivery: WebhookDelivery = {
      tenant: op.tenant,
      id: input.id,
      type: input.type,
      paymentId: row.id,
      paymentStatus: row.status,
      data: JSON.stringify({ payment: this.view(input.payment) }),
      verified: true,
      answered: 204,
    };
    if (this.snapshot.events.length % 3 === 0) this.webhooks.push({ ...delivery, answered: 503 });
    this.webhooks.push(delivery);
  }

  /** A result for the operation, first sent and then replayed `replays` times. */
  private answer(input: { op: PlannedOp; payload: Record<string, unknown> }): void {
    const { op } = input;
    for (let send = 0; send <= op.replays; send++) {
      this.record(op, resultAnswer({ op, payload: input.payload, send }));
    }
  }

  private record(op: PlannedOp, final: FinalRecord): void {
    this.finals.set(op.index, [...(this.finals.get(op.index) ?? []), final]);
  }

  /** A settlement recorded by machine or operator, counted per action as the snapshot does. */
  private intervention(action: string): void {
    const counted = this.snapshot.interventions.find((i) => i.action === action);
    if (counted === undefined) this.snapshot.interventions.push({ action, n: 1 });
    else counted.n += 1;
  }

  private tenantId(tenant: TenantName): string {
    return this.snapshot.tenantIds[tenant];
  }
}

/** The payment a create leaves: failed if declined, captured at once if automatic. */
function paymentRow(input: { op: CreateOp; id: string; tenantId: string }): PaymentRow {
  const { op, id } = input;
  const declined = op.token === 'pm_card_declined';
  const captured = !declined && op.captureMethod === 'AUTOMATIC';
  const amount = String(op.amountMinor);
  return {
    tenant_id: input.tenantId,
    id,
    status: declined ? 'FAILED' : captured ? 'SUCCEEDED' : 'REQUIRES_CAPTURE',
    amount_minor: amount,
    currency: op.currency,
    amount_captured_minor: captured ? amount : '0',
    amount_refunded_minor: '0',
    payment_method: op.token,
    capture_method: op.captureMethod,
    reference: op.reference,
    provider_key: providerChargeKey(id),
    provider_reference: `ch_${op.index}`,
    failure_code: declined ? 'CARD_DECLINED' : null,
  };
}

/** The provider's charge for a payment, under the payment's derived key. */
function chargeOf(input: { op: CreateOp; row: PaymentRow }): ProviderCharge {
  const { op, row } = input;
  const money = (minor: string) => formatMinor(Number(minor), row.currency);
  const status =
    row.status === 'FAILED' ? 'declined' : row.status === 'SUCCEEDED' ? 'captured' : 'authorized';
  return {
    id: row.provider_reference ?? `ch_${op.index}`,
    amount: money(row.amount_minor),
    currency: row.currency,
    status,
    amountCaptured: money(row.amount_captured_minor),
    amountRefunded: money(row.amount_refunded_minor),
    reference: op.reference,
    idempotencyKey: row.provider_key,
  };
}

export interface CleanRun {
  builder: FinishedRunBuilder;
  payments: Record<'automatic' | 'manual' | 'declined' | 'plain', PaymentHandle>;
}

/** The handful of operations every test starts from, and the payments they made. */
export function cleanRun(): CleanRun {
  const builder = new FinishedRunBuilder();
  const visa = { token: 'pm_card_visa', captureMethod: 'AUTOMATIC' } as const;
  // Captured at once, its create replayed; then partly refunded, and a refund too many refused.
  const automatic = builder.create({
    ...visa,
    tenant: 'a',
    amountMinor: 1000,
    currency: 'EUR',
    replays: 1,
  });
  const manual = builder.create({
    tenant: 'a',
    amountMinor: 2500,
    currency: 'EUR',
    token: 'pm_card_mastercard',
    captureMethod: 'MANUAL',
  });
  builder.capture(manual);
  builder.refund({ target: automatic, amountMinor: 400 });
  builder.refuse({
    kind: 'refund',
    target: automatic,
    amountMinor: 700,
    code: 'AMOUNT_EXCEEDS_REFUNDABLE',
    replays: 1,
  });
  const declined = builder.create({
    tenant: 'b',
    amountMinor: 5000,
    currency: 'JPY',
    token: 'pm_card_declined',
    captureMethod: 'AUTOMATIC',
  });
  // A payment nothing else touches.
  const plain = builder.create({ ...visa, tenant: 'b', amountMinor: 1999, currency: 'USD' });
  return { builder, payments: { automatic, manual, declined, plain } };
}
