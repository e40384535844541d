/** The ops service's surface: what the rest of the house may import from it. */
export { opsRouter } from './ops.router.ts';
