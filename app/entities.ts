import { IdempotencyIntervention } from '../lib/idempotency/idempotency-intervention.entity.ts';
import { IdempotencyKey } from '../lib/idempotency/idempotency-key.entity.ts';
import {
  IdempotencyLowWater,
  IdempotencyParked,
} from '../lib/idempotency/idempotency-low-water.entity.ts';
import { IdempotencyPartition } from '../lib/idempotency/idempotency-partition.entity.ts';
import { IdempotencyPhaseLogEntry } from '../lib/idempotency/idempotency-phase-log.entity.ts';
import { IdempotencyAnswer } from '../lib/idempotency/idempotency-answer.entity.ts';
import { InboxMessage } from '../lib/outbox/inbox-message.entity.ts';
import { OutboxConsumerCircuit } from '../lib/outbox/outbox-consumer-circuit.entity.ts';
import { OutboxCursor } from '../lib/outbox/outbox-cursor.entity.ts';
import { OutboxDelivery } from '../lib/outbox/outbox-delivery.entity.ts';
import { OutboxEvent } from '../lib/outbox/outbox-event.entity.ts';
import { OutboxSubscription } from '../lib/outbox/outbox-subscription.entity.ts';
import { LedgerPosting } from '../services/ledger/index.ts';
import { Receipt, WebhookEndpoint } from '../services/notifications/index.ts';
import {
  Payment,
  PaymentOperation,
  PaymentSetting,
  ProviderKeySecretRow,
} from '../services/payments/index.ts';
import { ApiKey, Tenant } from '../services/tenants/index.ts';

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
  IdempotencyAnswer,
  IdempotencyIntervention,
  IdempotencyPartition,
  IdempotencyLowWater,
  IdempotencyParked,
  Payment,
  PaymentOperation,
  PaymentSetting,
  ProviderKeySecretRow,
  OutboxEvent,
  OutboxDelivery,
  OutboxSubscription,
  OutboxCursor,
  OutboxConsumerCircuit,
  InboxMessage,
  LedgerPosting,
  WebhookEndpoint,
  Receipt,
];
