// JSON in and out over node:http. Every answer the sandbox gives goes through sendJson so a
// late answer (after a sleep) to a client that already hung up is dropped instead of throwing.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JsonAnswer } from './charge-types.ts';

/** Largest request body read (64 KB): a charge is a few hundred bytes, so anything bigger is a
 * broken or hostile client and must not make the sandbox buffer without bound. */
export const MAX_BODY_BYTES = 64 * 1024;

export type UnreadableReason = 'too-large' | 'invalid-json' | 'aborted';

export type BodyResult = { ok: true; value: unknown } | { ok: false; reason: UnreadableReason };

/** `emptyAsObject`: an empty body reads as `{}` (POST .../void takes no parameters, and a
 * client may send nothing at all); otherwise an empty body is invalid JSON. */
export function readJsonBody(
  request: IncomingMessage,
  options: { emptyAsObject?: boolean } = {},
): Promise<BodyResult> {
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
      const text = Buffer.concat(chunks).toString('utf8');
      if (text === '' && options.emptyAsObject === true) {
        finish({ ok: true, value: {} });
        return;
      }
      try {
        finish({ ok: true, value: JSON.parse(text) as unknown });
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

/** The answer to a body that could not be read, or undefined when the client is gone. */
export function unreadableBodyAnswer(reason: UnreadableReason): JsonAnswer | undefined {
  switch (reason) {
    case 'invalid-json':
      return invalidRequest('body must be JSON');
    case 'too-large': {
      // Close the connection: the unread rest of the body would otherwise be parsed as the
      // next request on this keep-alive socket.
      const tooLarge = errorAnswer({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
      return { ...tooLarge, headers: { Connection: 'close' } };
    }
    case 'aborted':
      return undefined;
  }
}
