/** The system service's surface: what the rest of the house may import from it. */
export { systemRouter } from './system.router.ts';
