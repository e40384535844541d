import { defineEntity, p } from '@mikro-orm/core';

/** `receipts` (migrations/0005): one per payment, however often its event is delivered. */
export const Receipt = defineEntity({
  name: 'Receipt',
  tableName: 'receipts',
  properties: {
    tenantId: p.uuid().primary(),
    id: p.text().primary(),
    paymentId: p.uuid(),
    eventId: p.text(),
    recordedAt: p.datetime().defaultRaw('now()'),
  },
  primaryKeys: ['tenantId', 'id'],
});
