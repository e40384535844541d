import type { ServiceCaller } from '../../services/router.ts';

/** Per-request GraphQL context. Built after authentication: a request without a tenant never gets here. */
export interface GatewayContext {
  tenantId: string;
  services: ServiceCaller;
  /** Set by a resolver that answered from a stored result; the replay plugin marks the response. */
  replayed: boolean;
  /** Where unexpected errors go before they are masked for the client. */
  reportError: (error: unknown) => void;
}
