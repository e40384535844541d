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

export interface OperationRoutesDeps {
  store: ChargeStore;
  refunds: RefundStore;
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
}

export function createOperationRoutes(deps: OperationRoutesDeps): OperationRoutes {
  const { store, refunds, operations } = deps;

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
  };
}
