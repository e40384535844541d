// Validates the bodies of POST /v1/charges/:id/capture, /void and /refunds. Like charge
// creation, anything rejected here leaves no trace: parsing is pure and happens before the
// idempotency ledger is consulted. Checks that need the charge (is the amount representable
// at its scale, within what it allows) happen later, in charge-operations.ts.
import { isRecord } from './charge-request-parser.ts';
import type { Parsed } from './charge-request-parser.ts';
import { isPositiveAmount } from './decimal-amount.ts';
import type { OperationKind, OperationRequest } from './operation-types.ts';

/** Longest refund reason accepted: a free-text note for people, not a document; bounding it
 * keeps a runaway client from filling the sandbox's memory through stored answers. */
export const REFUND_REASON_MAX_CHARS = 255;

const AMOUNT_MESSAGE = 'amount must be a positive decimal string, e.g. "10.50"';

export function parseOperationRequest(input: {
  kind: OperationKind;
  chargeId: string;
  body: unknown;
}): Parsed<OperationRequest> {
  const { kind, chargeId, body } = input;
  if (!isRecord(body)) return { ok: false, message: 'body must be a JSON object' };
  switch (kind) {
    case 'void':
      // A void has no parameters; a field here (say an amount) means the client wanted
      // something a void cannot do, so it is refused rather than ignored.
      if (Object.keys(body).length > 0) return { ok: false, message: 'void takes no parameters' };
      return { ok: true, value: { kind, chargeId } };
    case 'capture': {
      const { amount } = body;
      if (!isPositiveAmount(amount)) return { ok: false, message: AMOUNT_MESSAGE };
      return { ok: true, value: { kind, chargeId, amount } };
    }
    case 'refund': {
      const { amount, reason } = body;
      if (!isPositiveAmount(amount)) return { ok: false, message: AMOUNT_MESSAGE };
      if (reason === undefined || reason === null) {
        return { ok: true, value: { kind, chargeId, amount, reason: null } };
      }
      if (typeof reason !== 'string' || reason === '' || reason.length > REFUND_REASON_MAX_CHARS) {
        return { ok: false, message: `reason must be 1-${REFUND_REASON_MAX_CHARS} characters` };
      }
      return { ok: true, value: { kind, chargeId, amount, reason } };
    }
  }
}
