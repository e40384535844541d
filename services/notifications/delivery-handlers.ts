import type { NotificationsDeps } from './notifications.deps.ts';
import type {
  BatchDeliveryHandler,
  Delivery,
  DeliveryHandler,
  DeliveryResult,
} from '../../lib/outbox/delivery.ts';
import { writeEvent } from '../../lib/outbox/outbox.ts';
import { insertUnlessPresent } from '../../lib/db/insert-unless-present.ts';
import { withTransaction } from '../../lib/db/pool.ts';
import {
  DISABLE_ENDPOINT,
  INSERT_RECEIPTS,
  SELECT_ENABLED_ENDPOINTS,
} from './notifications.sql.ts';
import { WebhookEndpoint } from './webhook-endpoint.entity.ts';
import {
  ENDPOINT_ANSWERED_410,
  ENDPOINT_GONE,
  httpStatusFailure,
  webhookFailureOf,
  type WebhookFailureClass,
} from './webhook-failure.ts';
import { openWebhookSecret } from './webhook-secret.ts';
import { signWebhook } from './webhook-signature.ts';

/** A webhook endpoint gets this long to answer; slow endpoints are retried, not waited on. */
const WEBHOOK_TIMEOUT_MS = 5_000;
/** After this many attempts (about a day of backoff) a delivery is abandoned, and says so. */
const WEBHOOK_MAX_ATTEMPTS = 18;

interface EventPayload {
  payment?: { id?: string };
}

/**
 * Receipts, a claim's worth at once: one statement, a row per payment however often its events
 * are delivered. An event without a payment is abandoned, and says so.
 */
export function receiptsHandler(deps: NotificationsDeps): BatchDeliveryHandler {
  return async (deliveries) => {
    const paymentIds = deliveries.map((d) => (d.event.payload as EventPayload).payment?.id);
    const rows = deliveries.flatMap((d, i) => {
      const paymentId = paymentIds[i];
      return paymentId === undefined ? [] : [{ d, paymentId }];
    });
    if (rows.length > 0) {
      await insertUnlessPresent(deps.pool, INSERT_RECEIPTS, [
        rows.map((r) => r.d.tenantId),
        rows.map((r) => `receipt_payment_${r.paymentId}`),
        rows.map((r) => r.paymentId),
        rows.map((r) => r.d.eventId),
      ]);
    }
    return paymentIds.map((id) =>
      id === undefined
        ? { kind: 'abandon', why: 'event without a payment' }
        : { kind: 'delivered' },
    );
  };
}

/**
 * The notifications service's other consumers of the outbox: the webhook fan-out (one delivery per enabled endpoint, decided at delivery time)
 * and each endpoint's delivery (Standard Webhooks: a stable webhook-id, a timestamp and an HMAC
 * signature; 2xx delivered, 410 disables the endpoint, anything else is retried with backoff,
 * redirects included: they are never followed, see webhook-egress.client.ts).
 */
export function notificationHandlers(deps: NotificationsDeps): Record<string, DeliveryHandler> {
  return {
    webhooks: async (delivery) => {
      await withTransaction(deps.pool, async (tx) => {
        const { rows } = await tx.query<{ id: string }>(SELECT_ENABLED_ENDPOINTS, [
          delivery.tenantId,
          delivery.event.type,
        ]);
        await writeEvent(tx, {
          tenantId: delivery.tenantId,
          id: delivery.eventId,
          type: delivery.event.type,
          payload: delivery.event.payload,
          consumers: rows.map((r) => `webhook:${r.id}`),
        });
      });
      return { kind: 'delivered' };
    },
    // A throw would be stored as its message (a database's, a keyring's): the tenant sees a
    // class, our log the error.
    webhook: (delivery) =>
      deliverWebhook(deps, delivery).catch((error: unknown) =>
        failedAttempt(deps, delivery, { failure: 'internal_error', error }),
      ),
  };
}

async function deliverWebhook(
  deps: NotificationsDeps,
  delivery: Delivery,
): Promise<DeliveryResult> {
  const endpointId = delivery.consumer.slice('webhook:'.length);
  const endpoint = await deps.orm.em
    .fork()
    .findOne(
      WebhookEndpoint,
      { tenantId: delivery.tenantId, id: endpointId },
      { fields: ['url', 'secret', 'status', 'previousSecret', 'previousSecretExpiresAt'] },
    );
  if (endpoint === null || endpoint.status !== 'enabled')
    return { kind: 'abandon', why: ENDPOINT_GONE };
  // Sealed at rest (webhook-secret.ts): opened here, for the signature, and nowhere else.
  // Into a local, never back onto the entity: a managed entity holding the clear secret is one
  // flush away from writing it to the table.
  const ref = { tenantId: delivery.tenantId, endpointId };
  const secrets = [openWebhookSecret(deps.keyring, ref, endpoint.secret)];
  // During a rotation's overlap the replaced secret signs too (Standard Webhooks allows several
  // signatures), so a receiver still holding it verifies every delivery.
  const previous = endpoint.previousSecret;
  const previousUntil = endpoint.previousSecretExpiresAt;
  if (previous && previousUntil && previousUntil.getTime() > Date.now())
    secrets.push(openWebhookSecret(deps.keyring, ref, previous));
  const timestamp = Math.floor(Date.now() / 1000);
  const body = JSON.stringify({
    type: delivery.event.type,
    timestamp: new Date(timestamp * 1000).toISOString(),
    data: delivery.event.payload,
  });
  let status: number;
  try {
    ({ status } = await deps.webhookEgress.post({
      url: endpoint.url,
      headers: {
        'content-type': 'application/json',
        'webhook-id': delivery.eventId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': secrets
          .map((secret) => signWebhook({ secret, id: delivery.eventId, timestamp, body }))
          .join(' '),
      },
      body,
      timeoutMs: WEBHOOK_TIMEOUT_MS,
    }));
  } catch (error) {
    return failedAttempt(deps, delivery, { failure: webhookFailureOf(error), error });
  }
  if (status >= 200 && status < 300) return { kind: 'delivered' };
  if (status === 410) {
    // Gone: the merchant asks us to stop. Disable the endpoint; its other deliveries follow.
    await deps.pool.query(DISABLE_ENDPOINT, [
      delivery.tenantId,
      endpointId,
      'the endpoint answered 410 Gone',
    ]);
    return { kind: 'abandon', why: ENDPOINT_ANSWERED_410 };
  }
  // A 3xx too: the endpoint may have moved, or may be steering us inside; either way the
  // merchant fixes the URL, and we never follow.
  return giveUpOrRetry(delivery, httpStatusFailure(status));
}

/**
 * A failed attempt: the class is what the tenant sees; the error itself, with the addresses and
 * library text it may carry, goes only to our log.
 */
function failedAttempt(
  deps: NotificationsDeps,
  delivery: Delivery,
  { failure, error }: { failure: WebhookFailureClass; error: unknown },
): DeliveryResult {
  // Ours is a warning; the endpoint's own failure is the tenant's to fix, and routine.
  deps.log[failure === 'internal_error' ? 'warn' : 'info'](
    {
      err: error,
      tenantId: delivery.tenantId,
      eventId: delivery.eventId,
      consumer: delivery.consumer,
      failure,
    },
    'webhook attempt failed',
  );
  return giveUpOrRetry(delivery, failure);
}

/** The stored error is the failure's class alone, abandoned or not: `attempts` tells the rest. */
function giveUpOrRetry(delivery: Delivery, failure: string): DeliveryResult {
  return delivery.attempts >= WEBHOOK_MAX_ATTEMPTS
    ? { kind: 'abandon', why: failure }
    : { kind: 'retry', error: failure };
}
