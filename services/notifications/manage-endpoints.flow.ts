import { z } from 'zod';
import type { NotificationsDeps } from './notifications.deps.ts';
import type { JsonValue } from '../../lib/canonical-json.ts';
import { InputInvalidError } from '../../lib/errors.ts';
import { decodeSignedCursor, encodeSignedCursor } from '../../lib/input/signed-cursor.ts';
import { PAYMENT_EVENT_TYPES } from '../payments/contract.ts';
import { deliveryOf, type DeliveryRow, type DeliveryView } from './delivery-view.ts';
import {
  endpointCommand,
  endpointInput,
  managedOperation as managed,
  refusal,
  type EndpointCommandResult,
} from './endpoint-command.ts';
import {
  DELETE_ENDPOINT,
  LIST_DELIVERIES_AFTER,
  LIST_DELIVERIES_FIRST_PAGE,
  LIST_ENDPOINTS,
  REDELIVER,
  ROTATE_SECRET,
  SELECT_LIVE_ENDPOINT,
  UPDATE_ENDPOINT,
} from './manage-endpoints.sql.ts';
import { NOTIFICATION_ERRORS } from './notifications.errors.ts';
import { sealWebhookSecret } from './webhook-secret.ts';
import { generateWebhookSecret } from './webhook-signature.ts';
import { canonicalUuid } from '../../lib/input/uuid.ts';
import { WEBHOOK_DELIVERIES_MAX_PAGE_SIZE } from './contract.ts';
import { SEND_TEST_WEBHOOK_EVENT } from './send-test-event.flow.ts';

export const UPDATE_WEBHOOK_ENDPOINT = managed('webhooks.update.v1', 'updateWebhookEndpoint');
export const DELETE_WEBHOOK_ENDPOINT = managed('webhooks.delete.v1', 'deleteWebhookEndpoint');
export const ROTATE_WEBHOOK_SECRET = managed('webhooks.rotate-secret.v1', 'rotateWebhookSecret');
export const REDELIVER_WEBHOOK_EVENT = managed('webhooks.redeliver.v1', 'redeliverWebhookEvent');
export const MANAGE_WEBHOOK_OPERATIONS = [
  UPDATE_WEBHOOK_ENDPOINT,
  DELETE_WEBHOOK_ENDPOINT,
  ROTATE_WEBHOOK_SECRET,
  REDELIVER_WEBHOOK_EVENT,
  SEND_TEST_WEBHOOK_EVENT,
];

/** A day: long enough to deploy a new secret everywhere that verifies it. */
const DEFAULT_OVERLAP_SECONDS = 86_400;
/** A week at most: an old secret that still signs is a secret that can still be leaked. */
const MAX_OVERLAP_SECONDS = 7 * 86_400;

const keyed = { tenantId: z.uuid(), idempotencyKey: z.string() };
export const updateEndpointInput = z.strictObject({
  ...keyed,
  endpointId: z.string(),
  enabled: z.boolean().nullish(),
  eventTypes: z.array(z.string()).nullish(),
});
export const rotateSecretInput = endpointInput.extend({ overlapSeconds: z.number().nullish() });
export const redeliverInput = endpointInput.extend({ eventId: z.string() });
export const listDeliveriesInput = z.strictObject({
  tenantId: z.uuid(),
  endpointId: z.string(),
  first: z.number().int(),
  after: z.string().nullish(),
});

interface SummaryRow {
  id: string;
  url: string;
  status: string;
  disabled_reason: string | null;
  event_types: string[] | null;
  created_at: Date;
  updated_at: Date;
}

export interface EndpointSummary {
  [field: string]: JsonValue;
  id: string;
  url: string;
  status: string;
  disabledReason: string | null;
  eventTypes: string[] | null;
  createdAt: string;
  updatedAt: string;
}

function summaryOf(row: SummaryRow): EndpointSummary {
  return {
    id: row.id,
    url: row.url,
    status: row.status,
    disabledReason: row.disabled_reason,
    eventTypes: row.event_types,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** The endpoint id as PostgreSQL prints it, or null: a malformed id names no endpoint. */
function endpointIdOf(raw: string): string | null {
  return canonicalUuid(raw);
}

/** Event types as a set in one spelling, so the same choice always hashes the same. */
function eventTypesOf(raw: string[] | null | undefined): string[] | null | undefined {
  if (raw === undefined || raw === null) return raw;
  const known: readonly string[] = PAYMENT_EVENT_TYPES;
  const unknown = raw.filter((type) => !known.includes(type));
  if (raw.length === 0 || unknown.length > 0) {
    throw new InputInvalidError(
      'eventTypes',
      `eventTypes must name at least one of ${known.join(', ')}` +
        (unknown.length > 0 ? `; unknown: ${unknown.slice(0, 5).join(', ')}` : ''),
    );
  }
  return [...new Set(raw)].sort();
}

export function updateEndpoint(
  deps: NotificationsDeps,
  input: z.infer<typeof updateEndpointInput>,
): Promise<EndpointCommandResult> {
  return endpointCommand(deps, {
    operation: UPDATE_WEBHOOK_ENDPOINT,
    tenantId: input.tenantId,
    idempotencyKey: input.idempotencyKey,
    validate: () => {
      const eventTypes = eventTypesOf(input.eventTypes);
      return {
        endpointId: input.endpointId.toLowerCase(),
        enabled: input.enabled ?? null,
        // Absent leaves the types alone; null subscribes to every type.
        eventTypes: eventTypes === undefined ? 'unchanged' : eventTypes,
      };
    },
    decide: async (tx, command) => {
      const { endpointId, enabled, eventTypes } = command as {
        endpointId: string;
        enabled: boolean | null;
        eventTypes: string[] | null | 'unchanged';
      };
      const id = endpointIdOf(endpointId);
      if (id === null) return refusal(NOTIFICATION_ERRORS.WEBHOOK_ENDPOINT_NOT_FOUND);
      const { rows } = await tx.query<SummaryRow>(UPDATE_ENDPOINT, [
        input.tenantId,
        id,
        enabled,
        eventTypes !== 'unchanged',
        eventTypes === 'unchanged' ? null : eventTypes,
      ]);
      const row = rows[0];
      return row === undefined
        ? refusal(NOTIFICATION_ERRORS.WEBHOOK_ENDPOINT_NOT_FOUND)
        : { endpoint: summaryOf(row) };
    },
  });
}

export function deleteEndpoint(
  deps: NotificationsDeps,
  input: z.infer<typeof endpointInput>,
): Promise<EndpointCommandResult> {
  return endpointCommand(deps, {
    operation: DELETE_WEBHOOK_ENDPOINT,
    tenantId: input.tenantId,
    idempotencyKey: input.idempotencyKey,
    validate: () => ({ endpointId: input.endpointId.toLowerCase() }),
    decide: async (tx) => {
      const id = endpointIdOf(input.endpointId);
      if (id === null) return refusal(NOTIFICATION_ERRORS.WEBHOOK_ENDPOINT_NOT_FOUND);
      const { rows } = await tx.query<{ id: string }>(DELETE_ENDPOINT, [input.tenantId, id]);
      return rows[0] === undefined
        ? refusal(NOTIFICATION_ERRORS.WEBHOOK_ENDPOINT_NOT_FOUND)
        : { deletedEndpointId: id };
    },
  });
}

/**
 * A new signing secret, shown in this answer (and its replays: a merchant whose response was
 * lost must still learn it). The answer is stored sealed like every answer; the endpoint row
 * holds the secret sealed too, and the one it replaced until the overlap ends.
 */
export function rotateSecret(
  deps: NotificationsDeps,
  input: z.infer<typeof rotateSecretInput>,
): Promise<EndpointCommandResult> {
  return endpointCommand(deps, {
    operation: ROTATE_WEBHOOK_SECRET,
    tenantId: input.tenantId,
    idempotencyKey: input.idempotencyKey,
    validate: () => {
      const overlap = input.overlapSeconds ?? DEFAULT_OVERLAP_SECONDS;
      if (!Number.isInteger(overlap) || overlap < 0 || overlap > MAX_OVERLAP_SECONDS) {
        throw new InputInvalidError(
          'overlapSeconds',
          `overlapSeconds must be a whole number from 0 to ${MAX_OVERLAP_SECONDS}`,
        );
      }
      return { endpointId: input.endpointId.toLowerCase(), overlapSeconds: overlap };
    },
    decide: async (tx, command) => {
      const { overlapSeconds } = command as { overlapSeconds: number };
      const id = endpointIdOf(input.endpointId);
      if (id === null) return refusal(NOTIFICATION_ERRORS.WEBHOOK_ENDPOINT_NOT_FOUND);
      const secret = generateWebhookSecret();
      const sealed = sealWebhookSecret(
        deps.keyring,
        { tenantId: input.tenantId, endpointId: id },
        secret,
      );
      const { rows } = await tx.query<{
        id: string;
        url: string;
        status: string;
        created_at: Date;
        previous_secret_expires_at: Date;
      }>(ROTATE_SECRET, [input.tenantId, id, sealed, overlapSeconds]);
      const row = rows[0];
      if (row === undefined) return refusal(NOTIFICATION_ERRORS.WEBHOOK_ENDPOINT_NOT_FOUND);
      return {
        endpoint: {
          id: row.id,
          url: row.url,
          secret,
          status: row.status,
          createdAt: row.created_at.toISOString(),
        },
        previousSecretExpiresAt: row.previous_secret_expires_at.toISOString(),
      };
    },
  });
}

/** Delivers one event to an enabled endpoint again, under its original webhook-id. */
export function redeliverEvent(
  deps: NotificationsDeps,
  input: z.infer<typeof redeliverInput>,
): Promise<EndpointCommandResult> {
  return endpointCommand(deps, {
    operation: REDELIVER_WEBHOOK_EVENT,
    tenantId: input.tenantId,
    idempotencyKey: input.idempotencyKey,
    validate: () => ({ endpointId: input.endpointId.toLowerCase(), eventId: input.eventId }),
    decide: async (tx) => {
      const id = endpointIdOf(input.endpointId);
      if (id === null) return refusal(NOTIFICATION_ERRORS.WEBHOOK_ENDPOINT_NOT_FOUND);
      const endpoint = await tx.query<SummaryRow>(SELECT_LIVE_ENDPOINT, [input.tenantId, id]);
      const status = endpoint.rows[0]?.status;
      if (status === undefined) return refusal(NOTIFICATION_ERRORS.WEBHOOK_ENDPOINT_NOT_FOUND);
      if (status !== 'enabled') return refusal(NOTIFICATION_ERRORS.WEBHOOK_ENDPOINT_DISABLED);
      const { rows } = await tx.query<DeliveryRow>(REDELIVER, [
        input.tenantId,
        input.eventId,
        `webhook:${id}`,
      ]);
      return rows[0] === undefined
        ? refusal(NOTIFICATION_ERRORS.WEBHOOK_DELIVERY_NOT_FOUND)
        : { delivery: deliveryOf(rows[0]) };
    },
  });
}

/** The tenant's endpoints, oldest first, deleted ones left out; never a secret. */
export async function listEndpoints(
  deps: NotificationsDeps,
  tenantId: string,
): Promise<EndpointSummary[]> {
  const { rows } = await deps.pool.query<SummaryRow>(LIST_ENDPOINTS, [tenantId]);
  return rows.map(summaryOf);
}

export interface DeliveryPage {
  edges: Array<{ cursor: string; node: DeliveryView }>;
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/**
 * One page of an endpoint's deliveries in webhook-id order. Cursors are signed for the tenant
 * and the endpoint: one from another listing is BAD_USER_INPUT. An unknown or deleted
 * endpoint's listing is empty, as another tenant's would be.
 */
export async function listDeliveries(
  deps: NotificationsDeps,
  input: z.infer<typeof listDeliveriesInput>,
): Promise<DeliveryPage> {
  if (input.first < 1 || input.first > WEBHOOK_DELIVERIES_MAX_PAGE_SIZE)
    throw new InputInvalidError(
      'first',
      `first must be from 1 to ${WEBHOOK_DELIVERIES_MAX_PAGE_SIZE}`,
    );
  const empty = { edges: [], pageInfo: { hasNextPage: false, endCursor: null } };
  const id = endpointIdOf(input.endpointId);
  if (id === null) return empty;
  const scope = `${input.tenantId}.deliveries.${id}`;
  const after =
    input.after == null ? null : decodeSignedCursor(deps.keyring, scope, input.after)[0];
  if (after === undefined)
    throw new InputInvalidError('after', 'after is not a cursor this API returned');
  const endpoint = await deps.pool.query(SELECT_LIVE_ENDPOINT, [input.tenantId, id]);
  if (endpoint.rowCount === 0) return empty;
  const consumer = `webhook:${id}`;
  const { rows } =
    after === null
      ? await deps.pool.query<DeliveryRow>(LIST_DELIVERIES_FIRST_PAGE, [
          input.tenantId,
          consumer,
          input.first + 1,
        ])
      : await deps.pool.query<DeliveryRow>(LIST_DELIVERIES_AFTER, [
          input.tenantId,
          consumer,
          input.first + 1,
          after,
        ]);
  const page = rows.slice(0, input.first);
  const edges = page.map((row) => ({
    cursor: encodeSignedCursor(deps.keyring, scope, [row.event_id]),
    node: deliveryOf(row),
  }));
  return {
    edges,
    pageInfo: { hasNextPage: rows.length > input.first, endCursor: edges.at(-1)?.cursor ?? null },
  };
}
