import type { ProviderDeps } from './provider.deps.ts';
import { serviceTrpc } from '../trpc.ts';

/**
 * The provider service's procedures see only what it needs: so it runs the same inside the
 * whole stack and alone in a process of its own (SERVICES=provider), where nothing else exists.
 */
const t = serviceTrpc<{ deps: ProviderDeps }>();

export const router = t.router;
export const procedure = t.procedure;
export const createCallerFactory = t.createCallerFactory;
