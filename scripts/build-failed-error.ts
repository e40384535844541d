/** A build step failed (tsc's diagnostics in the message) or refused its output directory. */
export class BuildFailedError extends Error {
  override readonly name = 'BuildFailedError';
}
