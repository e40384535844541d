// Handlers for the operations on an existing charge (capture, void, refunds) and the refund
// probes. Like charge creation, a request needs a usable Idempotency-Key and a readable body
// before the provider looks at it; such rejections are 400s that bind nothing.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ChargeOperations } from './charge-operations.ts';
import { readIdempotencyKey } from './charge-request-parser.ts';
import type { ChargeStore } from './charge-store.ts';
import { errorAnswer, readJsonBody, sendJson } from './http-json.ts';
import { acceptKeyedRequest, decodeKeyInPath } from './keyed-request.ts';
import { parseOperationRequest } from './operation-request-parser.ts';
import type { OperationKind } from './operation-types.ts';
import type { RefundStore } from './refund-store.ts';
import type { SettlementKind } from './operation-types.ts';
import type { SettlementStore } from './settlement-store.ts';

export interface OperationRoutesDeps {
  store: ChargeStore;
  refunds: RefundStore;
  settlements: SettlementStore;
  operations: ChargeOperations;
}

/** Which operation a path names, on which charge (the id exactly as it appears in the path). */
export interface OperationTarget {
  kind: OperationKind;
  chargeId: string;
}

export interface OperationRoutes {
  operate(
    target: OperationTarget,
    request: IncomingMessage,
    response: ServerResponse,
  ): Promise<void>;
  listRefunds(chargeId: string, response: ServerResponse): void;
  getRefundByIdempotencyKey(encodedKey: string, response: ServerResponse): void;
  /** GET /v1/captures/by-idempotency-key/… and /v1/voids/by-idempotency-key/…: the capture or
   * void applied under the key, found however long ago (the books keep it after the key is
   * forgotten), or 404 CAPTURE_NOT_FOUND / VOID_NOT_FOUND. */
  getSettlementByIdempotencyKey(
    kind: SettlementKind,
    encodedKey: string,
    response: ServerResponse,
  ): void;
}

const SETTLEMENT_NOT_FOUND: Readonly<Record<SettlementKind, string>> = {
  capture: 'CAPTURE_NOT_FOUND',
  void: 'VOID_NOT_FOUND',
};

export function createOperationRoutes(deps: OperationRoutesDeps): OperationRoutes {
  const { store, refunds, settlements, operations } = deps;

  return {
    async operate(target, request, response) {
      const keyCheck = readIdempotencyKey(request.headers['idempotency-key']);
      const body = await readJsonBody(request, { emptyAsObject: target.kind === 'void' });
      const accepted = acceptKeyedRequest(response, { keyCheck, body }, (value) =>
        parseOperationRequest({ ...target, body: value }),
      );
      if (accepted === undefined) return;
      const answer = await operations.process({
        idempotencyKey: accepted.key,
        request: accepted.request,
      });
      sendJson(response, answer);
    },

    listRefunds(chargeId, response) {
      if (store.byId(chargeId) === undefined) {
        sendJson(response, errorAnswer({ status: 404, code: 'CHARGE_NOT_FOUND' }));
        return;
      }
      sendJson(response, { status: 200, body: { data: refunds.list({ chargeId }) } });
    },

    getRefundByIdempotencyKey(encodedKey, response) {
      const idempotencyKey = decodeKeyInPath(encodedKey, response);
      if (idempotencyKey === undefined) return;
      const refund = refunds.byIdempotencyKey(idempotencyKey);
      sendJson(
        response,
        refund === undefined
          ? errorAnswer({ status: 404, code: 'REFUND_NOT_FOUND' })
          : { status: 200, body: { refund } },
      );
    },

    getSettlementByIdempotencyKey(kind, encodedKey, response) {
      const idempotencyKey = decodeKeyInPath(encodedKey, response);
      if (idempotencyKey === undefined) return;
      const settlement = settlements.byIdempotencyKey(kind, idempotencyKey);
      sendJson(
        response,
        settlement === undefined
          ? errorAnswer({ status: 404, code: SETTLEMENT_NOT_FOUND[kind] })
          : { status: 200, body: { [kind]: settlement } },
      );
    },
  };
}
