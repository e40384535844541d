// Handlers for the /v1/charges endpoints: request parsing, attempt counting and the probes.
// The probes honour pm_card_unknown's blackhole exactly like charge calls do, because a
// gateway that could probe its way around an unreachable provider would never exercise its
// "outcome unknown" path.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AttemptLog } from './attempt-log.ts';
import type { ChargeProcessor } from './charge-processor.ts';
import { parseChargeRequest, readIdempotencyKey } from './charge-request-parser.ts';
import type { ChargeStore } from './charge-store.ts';
import type { FaultState } from './fault-state.ts';
import { errorAnswer, invalidRequest, readJsonBody, sendJson } from './http-json.ts';
import { sleepUntil } from './interruptible-sleep.ts';
import { acceptKeyedRequest, decodeKeyInPath } from './keyed-request.ts';

export interface ChargeRoutesDeps {
  store: ChargeStore;
  attempts: AttemptLog;
  faults: FaultState;
  processor: ChargeProcessor;
  shutdown: AbortSignal;
}

export interface ChargeRoutes {
  createCharge(request: IncomingMessage, response: ServerResponse): Promise<void>;
  listByReference(url: URL, response: ServerResponse): Promise<void>;
  getByIdempotencyKey(encodedKey: string, response: ServerResponse): Promise<void>;
}

function referenceOf(body: unknown): string | null {
  if (typeof body !== 'object' || body === null || !('reference' in body)) return null;
  return typeof body.reference === 'string' ? body.reference : null;
}

export function createChargeRoutes(deps: ChargeRoutesDeps): ChargeRoutes {
  const { store, attempts, faults, processor, shutdown } = deps;

  /** False when the server closed during the wait: the socket is gone, do not answer. */
  async function waitOutBlackhole(untilMs: number | undefined): Promise<boolean> {
    return untilMs === undefined || sleepUntil({ untilMs, signal: shutdown });
  }

  return {
    async createCharge(request, response) {
      const receivedAtMs = Date.now();
      const keyCheck = readIdempotencyKey(request.headers['idempotency-key']);
      const body = await readJsonBody(request);
      attempts.record({
        idempotencyKey: keyCheck.ok ? keyCheck.key : null,
        reference: body.ok ? referenceOf(body.value) : null,
      });
      const accepted = acceptKeyedRequest(response, { keyCheck, body }, parseChargeRequest);
      if (accepted === undefined) return;
      const outcome = await processor.process({
        idempotencyKey: accepted.key,
        request: accepted.request,
        receivedAtMs,
      });
      if (outcome.kind === 'answer') sendJson(response, outcome.answer);
    },

    async listByReference(url, response) {
      const reference = url.searchParams.get('reference');
      if (reference === null || reference === '') {
        sendJson(response, invalidRequest('query parameter reference is required'));
        return;
      }
      if (!(await waitOutBlackhole(faults.referenceBlackholeUntil(reference, Date.now())))) return;
      sendJson(response, { status: 200, body: { data: store.list({ reference }) } });
    },

    async getByIdempotencyKey(encodedKey, response) {
      const idempotencyKey = decodeKeyInPath(encodedKey, response);
      if (idempotencyKey === undefined) return;
      if (!(await waitOutBlackhole(faults.keyBlackholeUntil(idempotencyKey, Date.now())))) return;
      const charge = store.byIdempotencyKey(idempotencyKey);
      sendJson(
        response,
        charge === undefined
          ? errorAnswer({ status: 404, code: 'CHARGE_NOT_FOUND' })
          : { status: 200, body: { charge } },
      );
    },
  };
}
