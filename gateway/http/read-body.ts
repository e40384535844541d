import type { IncomingMessage } from 'node:http';

export class BodyTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`request body exceeds ${limitBytes} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

/** Reads a request body, refusing (before buffering more) once it passes `limitBytes`. */
export async function readBody(req: IncomingMessage, limitBytes: number): Promise<string> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limitBytes) throw new BodyTooLargeError(limitBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > limitBytes) throw new BodyTooLargeError(limitBytes);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
