/** The ops service's contract: the types the composition needs, without its router. */
export type { OpsDeps } from './ops.deps.ts';
