import { randomUUID } from 'node:crypto';
import { idempotencyInfo, type IdempotencyInfo } from '../../lib/idempotency/idempotency-key.ts';
import { z } from 'zod';
import type { NotificationsDeps } from './notifications.deps.ts';
import { AppError, type PublicError } from '../../lib/errors.ts';
import { subscribeToOutbox } from '../../lib/outbox/outbox.ts';
import { notAdmitted } from '../../lib/idempotency/not-admitted.ts';
import { defineOperation } from '../../lib/idempotency/operation.ts';
import type { StoredAnswer } from '../../lib/idempotency/types.ts';
import { refusal, storedRefusal } from './endpoint-command.ts';
import { NOTIFICATION_ERRORS } from './notifications.errors.ts';
import {
  COUNT_ENDPOINTS,
  INSERT_ENDPOINT,
  LOCK_TENANT_ENDPOINTS,
  SELECT_ENDPOINT,
} from './notifications.sql.ts';
import { currentBody } from '../../lib/idempotency/stored-answer.ts';
import { openWebhookSecret, sealWebhookSecret } from './webhook-secret.ts';
import { generateWebhookSecret } from './webhook-signature.ts';
import { judgeWebhookUrl } from './webhook-url.policy.ts';

export const REGISTER_WEBHOOK_ENDPOINT = defineOperation({
  id: 'webhooks.register.v1',
  publicName: 'registerWebhookEndpoint',
  service: 'notifications',
  // v1 stored the signing secret in the answer; v2 stores the endpoint without it, and every
  // answer (first or replay) reads the secret from the endpoint's sealed column.
  answerVersion: 2,
  outcomeOf: (body) =>
    body !== null && typeof body === 'object' && 'error' in body ? 'refused' : 'registered',
});

export const registerEndpointInput = z.strictObject({
  tenantId: z.uuid(),
  idempotencyKey: z.string(),
  url: z.string(),
});

const endpointView = z.object({
  id: z.string(),
  url: z.string(),
  secret: z.string(),
  status: z.string(),
  createdAt: z.string(),
});
type EndpointView = z.infer<typeof endpointView>;

/** The endpoint as its stored answer keeps it: everything but the secret (v2). */
const storedEndpoint = endpointView.omit({ secret: true });
type StoredEndpoint = z.infer<typeof storedEndpoint>;

export type RegisterEndpointResult =
  | {
      ok: true;
      endpoint: EndpointView;
      idempotency: IdempotencyInfo;
    }
  | { ok: false; error: PublicError; replayed: boolean };

/**
 * registerWebhookEndpoint: one endpoint per key. The whole effect is one local write, so the
 * request is decided at admission: the endpoint row and the stored answer commit with the key.
 * The signing secret is shown to the merchant here and on replays only, and stored once: sealed
 * in the endpoint row. The stored answer refers to it instead of holding a second copy that
 * would be replayable for the whole window.
 */
export async function registerEndpoint(
  deps: NotificationsDeps,
  input: z.infer<typeof registerEndpointInput>,
): Promise<RegisterEndpointResult> {
  let url: string;
  try {
    deps.engine.checkKey(REGISTER_WEBHOOK_ENDPOINT, input.idempotencyKey);
    // Judged before admission: a refused URL stores nothing, and the key stays free for a
    // corrected one (WEBHOOK_URL_NOT_ALLOWED and BAD_USER_INPUT are never stored).
    url = judgeWebhookUrl(input.url, deps.webhookEgress.allowList);
  } catch (error) {
    if (error instanceof AppError) return { ok: false, error: error.toPublic(), replayed: false };
    throw error;
  }
  const endpointId = randomUUID();
  const admission = await deps.engine.admit({
    scope: {
      tenantId: input.tenantId,
      operation: REGISTER_WEBHOOK_ENDPOINT,
      key: input.idempotencyKey,
    },
    command: { url },
    first: {
      to: 'endpoint_registered',
      resourceId: endpointId,
      work: async (tx) => {
        await tx.query(LOCK_TENANT_ENDPOINTS, [input.tenantId]);
        const { rows: counted } = await tx.query<{ endpoints: number }>(COUNT_ENDPOINTS, [
          input.tenantId,
        ]);
        if (counted[0]!.endpoints >= deps.webhookEndpointsPerTenant)
          return { decided: refusal(NOTIFICATION_ERRORS.WEBHOOK_ENDPOINT_LIMIT_REACHED) };
        const secret = sealWebhookSecret(
          deps.keyring,
          { tenantId: input.tenantId, endpointId },
          generateWebhookSecret(),
        );
        const { rows } = await tx.query<EndpointRow>(INSERT_ENDPOINT, [
          input.tenantId,
          endpointId,
          url,
          secret,
        ]);
        // Its tenant's events are fanned out to webhooks from now on (migrations/0014).
        await subscribeToOutbox(tx, { tenantId: input.tenantId, consumer: 'webhooks' });
        return { decided: { endpoint: toStoredEndpoint(rows[0]!) } };
      },
    },
  });
  const key = input.idempotencyKey;
  switch (admission.kind) {
    case 'replay':
    case 'decided': {
      const replayed = admission.kind === 'replay';
      const refused = storedRefusal(admission.answer);
      if (refused !== undefined) return { ok: false, error: refused, replayed };
      return answer(deps, admission.answer, { tenantId: input.tenantId, key, replayed });
    }
    case 'reused':
    case 'in_use':
    case 'unknown':
      return notAdmitted(admission);
    case 'owned': // admission decides it in its own transaction: never left to an owner
      throw new Error('registerWebhookEndpoint was not decided at admission');
  }
}

interface EndpointRow {
  id: string;
  url: string;
  secret: string;
  status: string;
  created_at: Date;
}

function toStoredEndpoint(row: EndpointRow): StoredEndpoint {
  return {
    id: row.id,
    url: row.url,
    status: row.status,
    createdAt: row.created_at.toISOString(),
  };
}

/**
 * The answer's endpoint: the stored one with its secret opened from the endpoint row. The
 * schema puts the fields in one order, so the first answer and every replay are the same bytes.
 */
async function withSecret(
  deps: NotificationsDeps,
  tenantId: string,
  endpoint: StoredEndpoint,
): Promise<EndpointView> {
  const row = await loadEndpoint(deps, tenantId, endpoint.id);
  const secret = openWebhookSecret(deps.keyring, { tenantId, endpointId: row.id }, row.secret);
  return endpointView.parse({ ...endpoint, secret });
}

async function loadEndpoint(
  deps: NotificationsDeps,
  tenantId: string,
  endpointId: string,
): Promise<EndpointRow> {
  const { rows } = await deps.pool.query<EndpointRow>(SELECT_ENDPOINT, [tenantId, endpointId]);
  if (rows[0] === undefined) throw new Error(`webhook endpoint ${endpointId} is missing`);
  return rows[0];
}

async function answer(
  deps: NotificationsDeps,
  stored: StoredAnswer,
  info: { tenantId: string; key: string; replayed: boolean },
): Promise<RegisterEndpointResult> {
  const body = z.object({ endpoint: storedEndpoint }).parse(
    await currentBody(REGISTER_WEBHOOK_ENDPOINT, stored, {
      // v1 held the secret in clear; the endpoint row holds the same one, which replaces it.
      upgrades: { 1: (v1) => Promise.resolve(z.object({ endpoint: storedEndpoint }).parse(v1)) },
      render: async (endpointId) => ({
        endpoint: toStoredEndpoint(await loadEndpoint(deps, info.tenantId, endpointId)),
      }),
    }),
  );
  return {
    ok: true,
    endpoint: await withSecret(deps, info.tenantId, body.endpoint),
    idempotency: idempotencyInfo(stored, info),
  };
}
