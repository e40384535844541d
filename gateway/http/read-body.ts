import type { IncomingMessage } from 'node:http';

export class BodyTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`request body exceeds ${limitBytes} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

/** The body did not arrive within its deadline: a client trickling it, or one that stalled. */
export class BodyTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`request body not received within ${timeoutMs} ms`);
    this.name = 'BodyTimeoutError';
  }
}

/**
 * Reads a request body, refusing (before buffering more) once it passes `limitBytes`, and once
 * `timeoutMs` have passed without all of it. Either way the request is left paused and its
 * socket open, so that the caller can still answer it (with `Connection: close`).
 */
export function readBody(
  req: IncomingMessage,
  limits: { maxBytes: number; timeoutMs: number },
): Promise<string> {
  const { maxBytes, timeoutMs } = limits;
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes)
    return Promise.reject(new BodyTooLargeError(maxBytes));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (error: Error | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.off('data', onData).off('end', onEnd).off('error', finish).off('close', onClose);
      if (error === null) {
        resolve(Buffer.concat(chunks).toString('utf8'));
      } else {
        req.pause();
        reject(error);
      }
    };
    const timer = setTimeout(() => finish(new BodyTimeoutError(timeoutMs)), timeoutMs);
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) finish(new BodyTooLargeError(maxBytes));
      else chunks.push(chunk);
    };
    const onEnd = () => finish(null);
    // Closed before its end: the client went away mid-body.
    const onClose = () => finish(new Error('request closed before its body ended'));
    req.on('data', onData).on('end', onEnd).on('error', finish).on('close', onClose);
  });
}
