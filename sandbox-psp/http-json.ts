// JSON in and out over node:http. Every answer the sandbox gives goes through sendJson so a
// late answer (after a sleep) to a client that already hung up is dropped instead of throwing.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JsonAnswer } from './charge-types.ts';

/** Largest request body read (64 KB): a charge is a few hundred bytes, so anything bigger is a
 * broken or hostile client and must not make the sandbox buffer without bound. */
export const MAX_BODY_BYTES = 64 * 1024;

export type BodyResult =
  { ok: true; value: unknown } | { ok: false; reason: 'too-large' | 'invalid-json' | 'aborted' };

export function readJsonBody(request: IncomingMessage): Promise<BodyResult> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: BodyResult): void => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    const declared = Number(request.headers['content-length'] ?? '0');
    if (declared > MAX_BODY_BYTES) {
      finish({ ok: false, reason: 'too-large' });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > MAX_BODY_BYTES) finish({ ok: false, reason: 'too-large' });
      else chunks.push(chunk);
    });
    request.on('end', () => {
      try {
        finish({ ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown });
      } catch {
        finish({ ok: false, reason: 'invalid-json' });
      }
    });
    // A client that disconnects mid-body must not leave the handler awaiting forever.
    request.on('error', () => finish({ ok: false, reason: 'aborted' }));
    request.on('close', () => finish({ ok: false, reason: 'aborted' }));
  });
}

export function sendJson(response: ServerResponse, answer: JsonAnswer): void {
  // The client may have given up while we slept (slow, blackhole); there is nobody to answer.
  if (response.headersSent || response.destroyed) return;
  const payload = JSON.stringify(answer.body);
  response.writeHead(answer.status, {
    ...answer.headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(payload),
  });
  response.end(payload);
}

export function errorAnswer(error: { status: number; code: string; message?: string }): JsonAnswer {
  const { status, code, message } = error;
  return { status, body: { error: message === undefined ? { code } : { code, message } } };
}

export function invalidRequest(message: string): JsonAnswer {
  return errorAnswer({ status: 400, code: 'INVALID_REQUEST', message });
}
