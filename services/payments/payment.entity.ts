import { defineEntity, p } from '@mikro-orm/core';

/**
 * `payments` (migrations/0001, fillfactor in 0008, the reference guard in 0017, version in 0022,
 * rebuilt with the columns updates change last in 0025).
 * Amounts are bigint minor units, read as strings so no amount is ever rounded through a JS
 * number. Written only by the payment phases (payments.sql.ts); read here for queries.
 */
export const Payment = defineEntity({
  name: 'Payment',
  tableName: 'payments',
  properties: {
    tenantId: p.uuid().primary(),
    id: p.uuid().primary(),
    status: p.enum(['PROCESSING', 'REQUIRES_CAPTURE', 'SUCCEEDED', 'FAILED', 'CANCELED']),
    amountMinor: p.bigint('string'),
    currency: p.text(),
    amountCapturedMinor: p.bigint('string').defaultRaw('0'),
    amountRefundedMinor: p.bigint('string').defaultRaw('0'),
    paymentMethod: p.text(),
    captureMethod: p.enum(['AUTOMATIC', 'MANUAL']),
    reference: p.text().nullable(),
    description: p.text().nullable(),
    metadata: p.json<unknown>().nullable(),
    providerKey: p.text(),
    providerReference: p.text().nullable(),
    failureCode: p.text().nullable(),
    /** The reference again while the tenant's reference guard holds it (migrations/0017). */
    guardedReference: p.text().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
    updatedAt: p.datetime().defaultRaw('now()'),
    /** Counts the payment's changes as the API shows them (migrations/0022, ADR 0041). */
    version: p.integer().default(1),
    /**
     * created_at in whole microseconds, as text: a JS Date holds milliseconds, and a cursor
     * built from one would repeat or skip rows created in the same millisecond.
     */
    createdUs: p
      .formula<string>(
        (table) => `(extract(epoch from ${table.alias}.created_at) * 1000000)::bigint::text`,
      )
      .type('string'),
  },
  primaryKeys: ['tenantId', 'id'],
  checks: [
    { name: 'payments_amount_ck', expression: 'amount_minor > 0' },
    { name: 'payments_currency_ck', expression: "currency ~ '^[A-Z]{3}$'" },
  ],
  indexes: [
    {
      // Unique by an exclusion constraint on a hash index (migrations/0023, ADR 0055).
      name: 'payments_provider_key_uq',
      expression:
        'ALTER TABLE payments ADD CONSTRAINT payments_provider_key_uq EXCLUDE USING hash (provider_key WITH =)',
    },
    {
      name: 'payments_tenant_created_ix',
      expression:
        'CREATE INDEX payments_tenant_created_ix ON payments (tenant_id, created_at DESC, id DESC)',
    },
    {
      name: 'payments_tenant_reference_ix',
      expression:
        'CREATE INDEX payments_tenant_reference_ix ON payments (tenant_id, reference, created_at DESC, id DESC) WHERE reference IS NOT NULL',
    },
    {
      name: 'payments_guarded_reference_uq',
      expression:
        'CREATE UNIQUE INDEX payments_guarded_reference_uq ON payments (tenant_id, guarded_reference) WHERE guarded_reference IS NOT NULL',
    },
  ],
});
