import { EventEmitter } from 'node:events';
import { Agent, type Dispatcher } from 'undici';
import type {
  AdapterChargeRequest,
  ChargeProbe,
  OperationProbe,
  ProviderAdapter,
  Traced,
} from './provider-adapter.ts';
import type {
  ChargeOperationOutcome,
  ChargeOutcome,
  ProviderCharge,
  ProviderStatement,
} from './provider-port.ts';

/** Retry-After we suggest when the provider refused without saying how long to wait. */
const DEFAULT_PROVIDER_RETRY_AFTER_SECONDS = 1;

interface ChargeBody {
  charge?: { id?: unknown };
  error?: { code?: unknown };
}

/** The provider refused a request we built: a bug on our side, never a payment outcome. */
export class ProviderRequestRejectedError extends Error {
  constructor(status: number, code: unknown) {
    super(`provider rejected the request: HTTP ${status} ${String(code)}`);
    this.name = 'ProviderRequestRejectedError';
  }
}

/**
 * One call's result. `refused`: no connection was made, so the provider cannot have seen the
 * request. `lost`: it was sent, or may have been, and no whole answer came back (deadline,
 * connection cut). `answered`: a status, with its JSON body when one arrived whole and parsed.
 */
type CallResult =
  | { kind: 'refused' }
  | { kind: 'lost' }
  | { kind: 'answered'; status: number; retryAfter: unknown; body: unknown };

interface Call extends Traced {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
}

/**
 * The HTTP adapter for the sandbox PSP's API (and any PSP speaking it). It maps every answer
 * to an outcome, keeping "nothing happened" (503, 429, connection refused) apart from "we do
 * not know" (timeout, connection lost after sending): only the first may be reported as such.
 *
 * Calls go through undici's `request` on the adapter's own keep-alive pool, not `fetch`, whose
 * WHATWG streams and AbortSignal cost several times the CPU per call (see
 * docs/decisions/0013-provider-calls-through-undici-request.md). `close()` ends the pool's
 * connections. A call's `requestId` goes to the provider as X-Request-Id.
 */
export function createHttpProviderAdapter(
  baseUrl: string,
): ProviderAdapter & { close(): Promise<void> } {
  const origin = new URL(baseUrl).origin;
  // undici's idle timeout (4 s unless the provider's Keep-Alive header says less, minus a
  // margin) stays under the usual server's 5 s, so we do not send on a connection the
  // provider is closing: a POST lost that way would be an unknown outcome to settle later.
  const pool = new Agent();
  const call = async (spec: Call): Promise<CallResult> => {
    const { method, path, body, timeoutMs, requestId } = spec;
    const headers =
      requestId === undefined ? spec.headers : { ...spec.headers, 'x-request-id': requestId };
    // The deadline covers the answer's body too: headers alone do not settle an outcome.
    const abort = new EventEmitter();
    const timer = setTimeout(() => abort.emit('abort'), timeoutMs);
    try {
      let response: Dispatcher.ResponseData;
      try {
        response = await pool.request({
          origin,
          path,
          method,
          headers,
          body,
          signal: abort,
        });
      } catch (error) {
        return connectionRefused(error) ? { kind: 'refused' } : { kind: 'lost' };
      }
      const retryAfter = response.headers['retry-after'];
      let text: string;
      try {
        text = await response.body.text();
      } catch {
        return { kind: 'answered', status: response.statusCode, retryAfter, body: undefined };
      }
      return { kind: 'answered', status: response.statusCode, retryAfter, body: parseJson(text) };
    } finally {
      clearTimeout(timer);
    }
  };
  const post = (path: string, idempotencyKey: string, payload: unknown) => ({
    method: 'POST' as const,
    path,
    headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
    body: JSON.stringify(payload),
  });

  return {
    async operate({
      kind,
      chargeId,
      amount,
      reason,
      idempotencyKey,
      timeoutMs,
      requestId,
    }): Promise<ChargeOperationOutcome> {
      const path = kind === 'refund' ? 'refunds' : kind;
      const payload =
        kind === 'void'
          ? {}
          : kind === 'refund' && reason !== null
            ? { amount, reason }
            : { amount };
      const result = await call({
        ...post(`/v1/charges/${encodeURIComponent(chargeId)}/${path}`, idempotencyKey, payload),
        timeoutMs,
        requestId,
      });
      if (result.kind === 'refused') return unavailable(undefined);
      if (result.kind === 'lost') return { kind: 'timeout' };
      const { status } = result;
      const body = result.body as (ChargeBody & { refund?: { id?: unknown } }) | undefined;
      if (body === undefined) {
        return provedNothingHappened(status) ? unavailable(result.retryAfter) : { kind: 'timeout' };
      }
      if (status === 200 && body.charge !== undefined) {
        const refundId = body.refund?.id;
        if (kind === 'refund' && typeof refundId !== 'string')
          throw new Error('provider answered a refund without its id');
        return {
          kind: 'applied',
          providerReference: typeof refundId === 'string' ? refundId : parseCharge(body.charge).id,
        };
      }
      // Refusals about the charge's state or amount are answers, stored by the provider too.
      if ([404, 409, 422].includes(status) && typeof body.error?.code === 'string') {
        return { kind: 'refused', code: body.error.code };
      }
      if (provedNothingHappened(status)) return unavailable(result.retryAfter);
      if (status >= 500) return { kind: 'timeout' };
      throw new ProviderRequestRejectedError(status, body.error?.code);
    },

    async probeCharge({ idempotencyKey, reference, timeoutMs, requestId }): Promise<ChargeProbe> {
      const deadline = Date.now() + timeoutMs;
      const result = await call({
        method: 'GET',
        path: `/v1/charges/by-idempotency-key/${encodeURIComponent(idempotencyKey)}`,
        headers: {},
        timeoutMs,
        requestId,
      });
      if (result.kind !== 'answered') return { kind: 'timeout' };
      const byKey = probeAnswer(result, 'CHARGE_NOT_FOUND', (body) => ({
        charge: parseCharge((body as { charge?: unknown }).charge),
      }));
      if (byKey !== 'unsupported') return byKey;
      // No lookup by key at this provider: its charges for our reference, ours among them or not.
      const listed = await call({
        method: 'GET',
        path: `/v1/charges?${new URLSearchParams({ reference }).toString()}`,
        headers: {},
        timeoutMs: Math.max(1, deadline - Date.now()),
        requestId,
      });
      if (listed.kind !== 'answered' || listed.status !== 200) return { kind: 'timeout' };
      const data = (listed.body as { data?: unknown } | undefined)?.data;
      if (!Array.isArray(data)) return { kind: 'timeout' };
      try {
        const charge = data.map(parseCharge).find((c) => c.idempotencyKey === idempotencyKey);
        return charge === undefined ? { kind: 'missing' } : { kind: 'found', charge };
      } catch {
        return { kind: 'timeout' };
      }
    },

    async probeOperation({ kind, idempotencyKey, timeoutMs, requestId }): Promise<OperationProbe> {
      const { collection, field, notFound } = OPERATION_PROBES[kind];
      const result = await call({
        method: 'GET',
        path: `/v1/${collection}/by-idempotency-key/${encodeURIComponent(idempotencyKey)}`,
        headers: {},
        timeoutMs,
        requestId,
      });
      if (result.kind !== 'answered') return { kind: 'timeout' };
      const probed = probeAnswer(result, notFound, (body) => {
        const found = (body as Record<string, unknown>)[field] as
          { id?: unknown; chargeId?: unknown } | undefined;
        // The reference `operate` answers when it applies: the refund's id, or the charge's.
        const reference = kind === 'refund' ? found?.id : found?.chargeId;
        if (typeof reference !== 'string')
          throw new Error(`provider answered a malformed ${field}`);
        return { providerReference: reference };
      });
      return probed === 'unsupported' ? { kind: 'timeout' } : probed;
    },

    async statement({ from, to, timeoutMs, requestId }): Promise<ProviderStatement> {
      const query = new URLSearchParams({ from, to });
      const result = await call({
        method: 'GET',
        path: `/v1/statement?${query.toString()}`,
        headers: {},
        timeoutMs,
        requestId,
      });
      if (result.kind !== 'answered') throw new Error(`provider statement: ${result.kind}`);
      if (result.status !== 200) throw new Error(`provider statement: HTTP ${result.status}`);
      const body = result.body as { data?: unknown; completeUntil?: unknown } | undefined;
      if (!Array.isArray(body?.data) || typeof body.completeUntil !== 'string')
        throw new Error('provider statement: bad body');
      return { charges: body.data.map(parseCharge), completeUntil: body.completeUntil };
    },

    async charge(request: AdapterChargeRequest): Promise<ChargeOutcome> {
      const result = await call({
        ...post('/v1/charges', request.idempotencyKey, {
          amount: request.amount,
          currency: request.currency,
          paymentMethod: request.paymentMethod,
          reference: request.reference,
          capture: request.capture,
        }),
        timeoutMs: request.timeoutMs,
        requestId: request.requestId,
      });
      if (result.kind === 'refused') return unavailable(undefined);
      if (result.kind === 'lost') return { kind: 'timeout' };
      const { status } = result;
      const body = result.body as ChargeBody | undefined;
      if (body === undefined) {
        // The status arrived but the body did not: for a 2xx the charge exists and we lost it.
        return provedNothingHappened(status) ? unavailable(result.retryAfter) : { kind: 'timeout' };
      }
      if (status === 200 && typeof body.charge?.id === 'string') {
        return { kind: 'approved', providerReference: body.charge.id, captured: request.capture };
      }
      if (status === 402 && typeof body.error?.code === 'string') {
        const id = body.charge?.id;
        return {
          kind: 'declined',
          providerReference: typeof id === 'string' ? id : null,
          failureCode: body.error.code,
        };
      }
      if (provedNothingHappened(status)) return unavailable(result.retryAfter);
      // Any other 5xx may have been raised after the charge was applied: unknown, not failed.
      if (status >= 500) return { kind: 'timeout' };
      throw new ProviderRequestRejectedError(status, body.error?.code);
    },

    close: () => pool.close(),
  };
}

/** Where each operation's probe looks, and the code its provider gives for "none". */
const OPERATION_PROBES = {
  capture: { collection: 'captures', field: 'capture', notFound: 'CAPTURE_NOT_FOUND' },
  void: { collection: 'voids', field: 'void', notFound: 'VOID_NOT_FOUND' },
  refund: { collection: 'refunds', field: 'refund', notFound: 'REFUND_NOT_FOUND' },
} as const;

/**
 * A probe's answer read strictly: `missing` only when the provider says that nothing has this
 * key in its own words (a 404 with `notFound`), since a "missing" is what licenses sending the
 * instruction again; `unsupported` when the provider has no such lookup (a 404 for the route,
 * 405, 501); anything else unreadable is no answer.
 */
function probeAnswer<Found>(
  result: Extract<CallResult, { kind: 'answered' }>,
  notFound: string,
  read: (body: unknown) => Found,
): ({ kind: 'found' } & Found) | { kind: 'missing' } | { kind: 'timeout' } | 'unsupported' {
  const code = (result.body as { error?: { code?: unknown } } | undefined)?.error?.code;
  if (result.status === 404 && code === notFound) return { kind: 'missing' };
  if (result.status === 404 || result.status === 405 || result.status === 501) return 'unsupported';
  if (result.status !== 200 || result.body === undefined) return { kind: 'timeout' };
  try {
    return { kind: 'found', ...read(result.body) };
  } catch {
    return { kind: 'timeout' };
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** 503 and 429 are refusals before any work: the provider did nothing with the request. */
function provedNothingHappened(status: number): boolean {
  return status === 503 || status === 429;
}

function unavailable(retryAfter: unknown): { kind: 'unavailable'; retryAfterSeconds: number } {
  const seconds = Number(retryAfter);
  return {
    kind: 'unavailable',
    retryAfterSeconds:
      Number.isFinite(seconds) && seconds > 0 ? seconds : DEFAULT_PROVIDER_RETRY_AFTER_SECONDS,
  };
}

/** ECONNREFUSED: no connection was made, so the request cannot have reached the provider. */
function connectionRefused(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ECONNREFUSED';
}

const CHARGE_STATUSES = new Set(['authorized', 'captured', 'declined', 'voided']);

/** Checks a charge from the provider instead of trusting its shape. */
function parseCharge(raw: unknown): ProviderCharge {
  const c = raw as Record<string, unknown> | null;
  if (
    c === null ||
    typeof c !== 'object' ||
    typeof c['id'] !== 'string' ||
    typeof c['idempotencyKey'] !== 'string' ||
    typeof c['status'] !== 'string' ||
    !CHARGE_STATUSES.has(c['status']) ||
    typeof c['createdAt'] !== 'string'
  ) {
    throw new Error('provider answered a malformed charge');
  }
  return {
    id: c['id'],
    idempotencyKey: c['idempotencyKey'],
    status: c['status'] as ProviderCharge['status'],
    failureCode: typeof c['failureCode'] === 'string' ? c['failureCode'] : null,
    createdAt: c['createdAt'],
  };
}
