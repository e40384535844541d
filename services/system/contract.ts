/** The system service's contract: the types the composition needs, without its router. */
export type { SystemDeps } from './system.deps.ts';
