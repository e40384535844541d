import { randomUUID } from 'node:crypto';
import { idempotencyInfo, type IdempotencyInfo } from '../kernel/idempotency/idempotency-key.ts';
import { z } from 'zod';
import type { ServiceDeps } from '../context.ts';
import { AppError, publicError, type PublicError } from '../kernel/errors.ts';
import { defineOperation } from '../kernel/idempotency/operation.ts';
import { requestHash } from '../kernel/idempotency/request-hash.ts';
import type { StoredResponse } from '../kernel/idempotency/types.ts';
import { INSERT_ENDPOINT, SELECT_ENDPOINT } from './notifications.sql.ts';
import { currentBody } from '../kernel/idempotency/stored-response.ts';
import { generateWebhookSecret } from './webhook-signature.ts';
import { judgeWebhookUrl } from './webhook-url.policy.ts';

export const REGISTER_WEBHOOK_ENDPOINT = defineOperation({
  id: 'webhooks.register.v1',
  publicName: 'registerWebhookEndpoint',
  service: 'notifications',
  responseVersion: 1,
  canBecomeUnknown: false,
  outcomeOf: (body) =>
    body !== null && typeof body === 'object' && 'error' in body ? 'refused' : 'registered',
});

export const registerEndpointInput = z.object({
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

export type RegisterEndpointResult =
  | {
      ok: true;
      endpoint: EndpointView;
      idempotency: IdempotencyInfo;
    }
  | { ok: false; error: PublicError; replayed: boolean };

/**
 * registerWebhookEndpoint: one endpoint per key. The whole effect is one local write, so the
 * request is decided at admission: the endpoint row and the stored response (with its signing
 * secret, shown to the merchant here and on replays only) commit with the key.
 */
export async function registerEndpoint(
  deps: ServiceDeps,
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
    requestHash: requestHash(REGISTER_WEBHOOK_ENDPOINT, { url }),
    first: {
      to: 'endpoint_registered',
      resourceId: endpointId,
      work: async (tx) => {
        const { rows } = await tx.query<EndpointRow>(INSERT_ENDPOINT, [
          input.tenantId,
          endpointId,
          url,
          generateWebhookSecret(),
        ]);
        return { decided: { endpoint: toEndpointView(rows[0]!) } };
      },
    },
  });
  const key = input.idempotencyKey;
  switch (admission.kind) {
    case 'replay':
      return answer(deps, admission.response, { tenantId: input.tenantId, key, replayed: true });
    case 'decided':
      return answer(deps, admission.response, { tenantId: input.tenantId, key, replayed: false });
    case 'reused':
      return { ok: false, error: publicError('IDEMPOTENCY_KEY_REUSED'), replayed: false };
    case 'in_use':
    case 'unknown':
    case 'owned':
      // Admission decides this request in its own transaction; a concurrent duplicate waits for it.
      return {
        ok: false,
        error: publicError('IDEMPOTENCY_KEY_IN_USE', { retryAfterSeconds: 1 }),
        replayed: false,
      };
  }
}

interface EndpointRow {
  id: string;
  url: string;
  secret: string;
  status: string;
  created_at: Date;
}

function toEndpointView(row: EndpointRow): EndpointView {
  return {
    id: row.id,
    url: row.url,
    secret: row.secret,
    status: row.status,
    createdAt: row.created_at.toISOString(),
  };
}

async function answer(
  deps: ServiceDeps,
  stored: StoredResponse,
  info: { tenantId: string; key: string; replayed: boolean },
): Promise<RegisterEndpointResult> {
  const body = z.object({ endpoint: endpointView }).parse(
    await currentBody(REGISTER_WEBHOOK_ENDPOINT, stored, {
      upgrades: {},
      render: async (endpointId) => {
        const { rows } = await deps.pool.query<EndpointRow>(SELECT_ENDPOINT, [
          info.tenantId,
          endpointId,
        ]);
        if (rows[0] === undefined) throw new Error(`webhook endpoint ${endpointId} is missing`);
        return { endpoint: toEndpointView(rows[0]) };
      },
    }),
  );
  return {
    ok: true,
    endpoint: body.endpoint,
    idempotency: idempotencyInfo(stored, info),
  };
}
