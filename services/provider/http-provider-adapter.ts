import type { AdapterChargeRequest, ProbeOutcome, ProviderAdapter } from './provider-adapter.ts';
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
 * The HTTP adapter for the sandbox PSP's API (and any PSP speaking it). It maps every answer
 * to an outcome, keeping "nothing happened" (503, 429, connection refused) apart from "we do
 * not know" (timeout, connection lost after sending): only the first may be reported as such.
 */
/**
 * `requestId` names the request a call belongs to (sent as X-Request-Id, so the provider's logs
 * and ours can be joined); it is read at each call, from the caller's async context.
 */
export function createHttpProviderAdapter(
  baseUrl: string,
  requestId: () => string | undefined = () => undefined,
): ProviderAdapter {
  const traced = (headers: Record<string, string> = {}): Record<string, string> => {
    const id = requestId();
    return id === undefined ? headers : { ...headers, 'x-request-id': id };
  };
  return {
    async operate({
      kind,
      chargeId,
      amount,
      reason,
      idempotencyKey,
      timeoutMs,
    }): Promise<ChargeOperationOutcome> {
      const path = kind === 'refund' ? 'refunds' : kind;
      const payload =
        kind === 'void'
          ? {}
          : kind === 'refund' && reason !== null
            ? { amount, reason }
            : { amount };
      let response: Response;
      try {
        response = await fetch(
          new URL(`/v1/charges/${encodeURIComponent(chargeId)}/${path}`, baseUrl),
          {
            method: 'POST',
            headers: traced({
              'content-type': 'application/json',
              'idempotency-key': idempotencyKey,
            }),
            body: JSON.stringify(payload),
            signal: AbortSignal.timeout(timeoutMs),
          },
        );
      } catch (error) {
        return connectionRefused(error)
          ? { kind: 'unavailable', retryAfterSeconds: DEFAULT_PROVIDER_RETRY_AFTER_SECONDS }
          : { kind: 'timeout' };
      }
      let body: ChargeBody;
      try {
        body = (await response.json()) as ChargeBody;
      } catch {
        return provedNothingHappened(response) ? unavailable(response) : { kind: 'timeout' };
      }
      if (response.status === 200 && body.charge !== undefined) {
        const refundId = (body as { refund?: { id?: unknown } }).refund?.id;
        if (kind === 'refund' && typeof refundId !== 'string')
          throw new Error('provider answered a refund without its id');
        return {
          kind: 'applied',
          providerReference: typeof refundId === 'string' ? refundId : parseCharge(body.charge).id,
        };
      }
      // Refusals about the charge's state or amount are answers, stored by the provider too.
      if ([404, 409, 422].includes(response.status) && typeof body.error?.code === 'string') {
        return { kind: 'refused', code: body.error.code };
      }
      if (provedNothingHappened(response)) return unavailable(response);
      if (response.status >= 500) return { kind: 'timeout' };
      throw new ProviderRequestRejectedError(response.status, body.error?.code);
    },

    async probe({ idempotencyKey, timeoutMs }): Promise<ProbeOutcome> {
      let response: Response;
      try {
        response = await fetch(
          new URL(`/v1/charges/by-idempotency-key/${encodeURIComponent(idempotencyKey)}`, baseUrl),
          { headers: traced(), signal: AbortSignal.timeout(timeoutMs) },
        );
        if (response.status === 404) return { kind: 'missing' };
        if (response.status !== 200) return { kind: 'timeout' };
        const body = (await response.json()) as { charge?: unknown };
        return { kind: 'found', charge: parseCharge(body.charge) };
      } catch {
        return { kind: 'timeout' };
      }
    },

    async statement({ from, to, timeoutMs }): Promise<ProviderStatement> {
      const url = new URL('/v1/statement', baseUrl);
      url.searchParams.set('from', from);
      url.searchParams.set('to', to);
      const response = await fetch(url, {
        headers: traced(),
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (response.status !== 200) throw new Error(`provider statement: HTTP ${response.status}`);
      const body = (await response.json()) as { data?: unknown; completeUntil?: unknown };
      if (!Array.isArray(body.data) || typeof body.completeUntil !== 'string')
        throw new Error('provider statement: bad body');
      return { charges: body.data.map(parseCharge), completeUntil: body.completeUntil };
    },

    async charge(request: AdapterChargeRequest): Promise<ChargeOutcome> {
      let response: Response;
      try {
        response = await fetch(new URL('/v1/charges', baseUrl), {
          method: 'POST',
          headers: traced({
            'content-type': 'application/json',
            'idempotency-key': request.idempotencyKey,
          }),
          body: JSON.stringify({
            amount: request.amount,
            currency: request.currency,
            paymentMethod: request.paymentMethod,
            reference: request.reference,
            capture: request.capture,
          }),
          signal: AbortSignal.timeout(request.timeoutMs),
        });
      } catch (error) {
        return connectionRefused(error)
          ? { kind: 'unavailable', retryAfterSeconds: DEFAULT_PROVIDER_RETRY_AFTER_SECONDS }
          : { kind: 'timeout' };
      }
      let body: ChargeBody;
      try {
        body = (await response.json()) as ChargeBody;
      } catch {
        // The status arrived but the body did not: for a 2xx the charge exists and we lost it.
        return provedNothingHappened(response) ? unavailable(response) : { kind: 'timeout' };
      }
      if (response.status === 200 && typeof body.charge?.id === 'string') {
        return { kind: 'approved', providerReference: body.charge.id, captured: request.capture };
      }
      if (response.status === 402 && typeof body.error?.code === 'string') {
        const id = body.charge?.id;
        return {
          kind: 'declined',
          providerReference: typeof id === 'string' ? id : null,
          failureCode: body.error.code,
        };
      }
      if (provedNothingHappened(response)) return unavailable(response);
      // Any other 5xx may have been raised after the charge was applied: unknown, not failed.
      if (response.status >= 500) return { kind: 'timeout' };
      throw new ProviderRequestRejectedError(response.status, body.error?.code);
    },
  };
}

/** 503 and 429 are refusals before any work: the provider did nothing with the request. */
function provedNothingHappened(response: Response): boolean {
  return response.status === 503 || response.status === 429;
}

function unavailable(response: Response): { kind: 'unavailable'; retryAfterSeconds: number } {
  const header = Number(response.headers.get('retry-after'));
  return {
    kind: 'unavailable',
    retryAfterSeconds:
      Number.isFinite(header) && header > 0 ? header : DEFAULT_PROVIDER_RETRY_AFTER_SECONDS,
  };
}

/** ECONNREFUSED: no connection was made, so the request cannot have reached the provider. */
function connectionRefused(error: unknown): boolean {
  const cause =
    error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  return cause?.code === 'ECONNREFUSED';
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
