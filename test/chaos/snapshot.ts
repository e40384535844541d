/**
 * Everything the auditor compares, read once after the run has settled: the gateway's tables
 * (payments, operations, idempotency keys, ledger, outbox, receipts) and the provider's books
 * (its statement and the refunds of every charge). Read-only, from the harness's own session.
 */
import type pg from 'pg';
import { LOG_BACKLOG } from '../../lib/outbox/event-log.sql.ts';
import { TENANTS } from './stack.ts';

export interface PaymentRow {
  tenant_id: string;
  id: string;
  status: string;
  amount_minor: string;
  currency: string;
  amount_captured_minor: string;
  amount_refunded_minor: string;
  payment_method: string;
  capture_method: string;
  reference: string | null;
  provider_key: string;
  provider_reference: string | null;
  failure_code: string | null;
}

export interface OperationRow {
  tenant_id: string;
  id: string;
  payment_id: string;
  kind: 'capture' | 'cancel' | 'refund';
  amount_minor: string | null;
  status: string;
  provider_key: string;
}

export interface KeyRow {
  tenant_id: string;
  operation: string;
  key: string;
  state: string;
  resource_id: string | null;
}

export interface PostingRow {
  tenant_id: string;
  id: string;
  payment_id: string;
  kind: string;
  currency: string;
  /** The posting's entry (ADR 0058): one account debited, one credited, with one amount. */
  debit_account: string;
  credit_account: string;
  amount_minor: string;
}

export interface ProviderCharge {
  id: string;
  amount: string;
  currency: string;
  status: string;
  amountCaptured: string;
  amountRefunded: string;
  reference: string;
  idempotencyKey: string;
}

export interface ProviderRefund {
  id: string;
  chargeId: string;
  amount: string;
  idempotencyKey: string;
}

export interface Snapshot {
  tenantIds: Record<'a' | 'b', string>;
  payments: PaymentRow[];
  operations: OperationRow[];
  keys: KeyRow[];
  postings: PostingRow[];
  receipts: Array<{ tenant_id: string; payment_id: string }>;
  events: Array<{ tenant_id: string; id: string; type: string }>;
  deliveries: Array<{ status: string; consumer: string; n: number }>;
  interventions: Array<{ action: string; n: number }>;
  charges: ProviderCharge[];
  refunds: ProviderRefund[];
}

/** Refund listings fetched at once from the sandbox. */
const REFUND_FETCH_CONCURRENCY = 8;

export async function takeSnapshot(input: {
  pool: pg.Pool;
  sandboxUrl: string;
  runStartedAt: number;
}): Promise<Snapshot> {
  const { pool } = input;
  const q = async <T extends pg.QueryResultRow>(sql: string, params: unknown[] = []) =>
    (await pool.query<T>(sql, params)).rows;
  const tenantRows = await q<{ id: string; name: string }>(
    'SELECT id, name FROM tenants WHERE name = ANY($1)',
    [[TENANTS.a.name, TENANTS.b.name]],
  );
  const idOf = (name: string) => tenantRows.find((t) => t.name === name)?.id ?? 'missing';
  const charges = await statement(input);
  return {
    tenantIds: { a: idOf(TENANTS.a.name), b: idOf(TENANTS.b.name) },
    payments: await q<PaymentRow>(`
      SELECT tenant_id, id, status, amount_minor, currency, amount_captured_minor,
             amount_refunded_minor, payment_method, capture_method, reference, provider_key,
             provider_reference, failure_code
        FROM payments`),
    operations: await q<OperationRow>(`
      SELECT tenant_id, id, payment_id, kind, amount_minor, status, provider_key
        FROM payment_operations`),
    keys: await q<KeyRow>(
      `SELECT tenant_id, operation, key, state, resource_id FROM idempotency_keys`,
    ),
    postings: await q<PostingRow>(`
      SELECT tenant_id, id, payment_id, kind, currency, debit_account, credit_account,
             amount_minor::text AS amount_minor
        FROM ledger_postings`),
    receipts: await q(`SELECT tenant_id, payment_id FROM receipts`),
    events: await q(`SELECT tenant_id, id, type FROM outbox_events`),
    // Delivery rows by status, and the events still after a log consumer's cursor (0016; the
    // backlog gauges' query) as 'behind its cursor': the audit wants every one delivered.
    deliveries: [
      ...(await q<{ status: string; consumer: string; n: number }>(`
        SELECT status, split_part(consumer, ':', 1) AS consumer, count(*)::int AS n
          FROM outbox_deliveries GROUP BY 1, 2`)),
      ...(await q<{ consumer: string; pending: number }>(LOG_BACKLOG))
        .filter((row) => row.pending > 0)
        .map((row) => ({ status: 'behind its cursor', consumer: row.consumer, n: row.pending })),
    ],
    interventions: await q(`
      SELECT action, count(*)::int AS n FROM idempotency_interventions GROUP BY action`),
    charges,
    refunds: await refundsOf({ sandboxUrl: input.sandboxUrl, charges }),
  };
}

/** The provider's books for the whole run (from well before it, to be safe about clocks). */
async function statement(input: {
  sandboxUrl: string;
  runStartedAt: number;
}): Promise<ProviderCharge[]> {
  const from = new Date(input.runStartedAt - 10 * 60_000).toISOString();
  const to = new Date(Date.now() + 60_000).toISOString();
  const response = await fetch(`${input.sandboxUrl}/v1/statement?from=${from}&to=${to}`);
  if (!response.ok) throw new Error(`statement: HTTP ${response.status}`);
  const body = (await response.json()) as { data: ProviderCharge[] };
  return body.data;
}

async function refundsOf(input: {
  sandboxUrl: string;
  charges: ProviderCharge[];
}): Promise<ProviderRefund[]> {
  const captured = input.charges.filter((charge) => charge.status === 'captured');
  const refunds: ProviderRefund[] = [];
  let next = 0;
  const worker = async () => {
    while (next < captured.length) {
      const charge = captured[next++];
      if (charge === undefined) return;
      const response = await fetch(`${input.sandboxUrl}/v1/charges/${charge.id}/refunds`);
      if (!response.ok) throw new Error(`refunds of ${charge.id}: HTTP ${response.status}`);
      refunds.push(...((await response.json()) as { data: ProviderRefund[] }).data);
    }
  };
  await Promise.all(Array.from({ length: REFUND_FETCH_CONCURRENCY }, worker));
  return refunds;
}

/** The key rows of each scope (tenant/operation/key), in the snapshot's order. */
export function keysByScope(rows: KeyRow[]): Map<string, KeyRow[]> {
  const keys = new Map<string, KeyRow[]>();
  for (const row of rows) {
    const scope = `${row.tenant_id}/${row.operation}/${row.key}`;
    keys.set(scope, [...(keys.get(scope) ?? []), row]);
  }
  return keys;
}
