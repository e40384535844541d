import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

/**
 * What one request is about, for its log lines. Filled in as it becomes known: the request id
 * at the edge, the tenant after authentication, the operation and key reference at admission.
 * Never the raw idempotency key, API key or payment method.
 */
export interface RequestScope {
  requestId: string;
  tenantId?: string;
  operation?: string;
  /** A short hash of (tenant, operation, key): correlates one key's lines without revealing it. */
  keyRef?: string;
}

/** A request id we accept from a caller; anything else is replaced by one of our own. */
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The request a piece of work belongs to, carried through async calls (GraphQL resolver → tRPC
 * local call → provider call) without threading it through every signature. One instance per
 * process, made by whoever composes it.
 */
export class RequestContext {
  private readonly storage = new AsyncLocalStorage<RequestScope>();

  /** Runs `work` as request `requestId` (the caller's, if well-formed; else a fresh one). */
  run<T>(requestId: string | undefined, work: (scope: RequestScope) => T): T {
    const id =
      requestId !== undefined && REQUEST_ID_PATTERN.test(requestId) ? requestId : randomUUID();
    const scope: RequestScope = { requestId: id };
    return this.storage.run(scope, () => work(scope));
  }

  current(): RequestScope | undefined {
    return this.storage.getStore();
  }

  /** Adds what has become known about the current request (no-op outside one). */
  annotate(fields: Omit<Partial<RequestScope>, 'requestId'>): void {
    const scope = this.storage.getStore();
    if (scope !== undefined) Object.assign(scope, fields);
  }
}
