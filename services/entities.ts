import { IdempotencyIntervention } from './kernel/idempotency/idempotency-intervention.entity.ts';
import { IdempotencyKey } from './kernel/idempotency/idempotency-key.entity.ts';
import { IdempotencyPartition } from './kernel/idempotency/idempotency-partition.entity.ts';
import { IdempotencyPhaseLogEntry } from './kernel/idempotency/idempotency-phase-log.entity.ts';
import { IdempotencyResponse } from './kernel/idempotency/idempotency-response.entity.ts';
import { InboxMessage } from './kernel/outbox/inbox-message.entity.ts';
import { OutboxCursor } from './kernel/outbox/outbox-cursor.entity.ts';
import { OutboxDelivery } from './kernel/outbox/outbox-delivery.entity.ts';
import { OutboxEvent } from './kernel/outbox/outbox-event.entity.ts';
import { OutboxSubscription } from './kernel/outbox/outbox-subscription.entity.ts';
import { LedgerLine, LedgerPosting } from './ledger/index.ts';
import { Receipt, WebhookEndpoint } from './notifications/index.ts';
import {
  Payment,
  PaymentOperation,
  PaymentSetting,
  ProviderKeySecretRow,
} from './payments/index.ts';
import { ApiKey, Tenant } from './tenants/index.ts';

/**
 * One entity per table the migrations create (a partitioned table's parent only). The SQL
 * migrations stay the schema's source of truth; test/integration/entity-schema.test.ts fails
 * when an entity and the migrated schema disagree.
 */
export const ENTITIES = [
  Tenant,
  ApiKey,
  IdempotencyKey,
  IdempotencyPhaseLogEntry,
  IdempotencyResponse,
  IdempotencyIntervention,
  IdempotencyPartition,
  Payment,
  PaymentOperation,
  PaymentSetting,
  ProviderKeySecretRow,
  OutboxEvent,
  OutboxDelivery,
  OutboxSubscription,
  OutboxCursor,
  InboxMessage,
  LedgerPosting,
  LedgerLine,
  WebhookEndpoint,
  Receipt,
];
