import { defineEntity, p } from '@mikro-orm/core';
import { Payment } from './payment.entity.ts';

/**
 * `payment_operations` (migrations/0003, refunds in 0004): captures, cancels and refunds.
 * Written only by the operation phases (payments.sql.ts); read here for queries.
 */
export const PaymentOperation = defineEntity({
  name: 'PaymentOperation',
  tableName: 'payment_operations',
  properties: {
    tenantId: p.uuid().primary(),
    id: p.uuid().primary(),
    // The payment, by (tenant_id, payment_id): tenant_id is shared with this row's primary key.
    payment: () =>
      p
        .manyToOne(Payment)
        .fieldNames('tenant_id', 'payment_id')
        .foreignKeyName('payment_operations_payment_fk')
        .updateRule('no action')
        .deleteRule('no action')
        .ref(),
    kind: p.enum(['capture', 'cancel', 'refund']),
    amountMinor: p.bigint('string').nullable(),
    status: p.enum(['PROCESSING', 'SUCCEEDED', 'FAILED']),
    providerKey: p.text(),
    providerReference: p.text().nullable(),
    failureCode: p.text().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
    updatedAt: p.datetime().defaultRaw('now()'),
    reason: p.text().nullable(),
  },
  primaryKeys: ['tenantId', 'id'],
  checks: [
    {
      name: 'payment_operations_amount_ck',
      expression: 'amount_minor IS NULL OR amount_minor > 0',
    },
    {
      name: 'payment_operations_refund_amount_ck',
      expression: "kind <> 'refund' OR amount_minor IS NOT NULL",
    },
  ],
  indexes: [
    {
      // Unique by an exclusion constraint on a hash index (migrations/0023, ADR 0055).
      name: 'payment_operations_provider_key_uq',
      expression:
        'ALTER TABLE payment_operations ADD CONSTRAINT payment_operations_provider_key_uq EXCLUDE USING hash (provider_key WITH =)',
    },
    { name: 'payment_operations_payment_ix', properties: ['tenantId', 'payment', 'kind'] },
    {
      // Unique and partial: one live capture or cancel per payment, decided by the database.
      name: 'payment_operations_one_settlement_uq',
      expression: `CREATE UNIQUE INDEX payment_operations_one_settlement_uq ON payment_operations (tenant_id, payment_id) WHERE kind IN ('capture', 'cancel') AND status <> 'FAILED'`,
    },
  ],
});
