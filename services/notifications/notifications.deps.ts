import type { MikroORM } from '@mikro-orm/postgresql';
import type pg from 'pg';
import type { Keyring } from '../../lib/crypto/keyring.ts';
import type { IdempotencyEngine } from '../../lib/idempotency/engine.ts';
import type { Logger } from '../../lib/logging/logger.ts';
import type { RequestTrace } from '../../lib/logging/request-trace.ts';
import type { WebhookEgress } from './webhook-egress.client.ts';

/** What the notifications service needs: the one way webhooks leave the process among it. */
export interface NotificationsDeps {
  pool: pg.Pool;
  orm: MikroORM;
  engine: IdempotencyEngine;
  /** Seals webhook signing secrets. */
  keyring: Keyring;
  log: Logger;
  trace: RequestTrace | null;
  /** Where webhooks may go, and the one way they leave the process. */
  webhookEgress: WebhookEgress;
  /** Endpoints a tenant may have, enabled or disabled (WEBHOOK_ENDPOINTS_PER_TENANT). */
  webhookEndpointsPerTenant: number;
}
