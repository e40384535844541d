import { defineEntity, p } from '@mikro-orm/core';

/**
 * `payment_settings` (migrations/0017): a tenant's payment settings, the reference guard for now.
 * No row: every setting at its default. Written by TURN_REFERENCE_GUARD_ON and _OFF (payments.sql.ts).
 */
export const PaymentSetting = defineEntity({
  name: 'PaymentSetting',
  tableName: 'payment_settings',
  properties: {
    tenantId: p.uuid().primary(),
    referenceGuard: p.boolean().default(false),
    updatedAt: p.datetime().defaultRaw('now()'),
  },
});
