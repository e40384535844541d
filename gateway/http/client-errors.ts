import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../../lib/logging/logger.ts';

/**
 * What Node's HTTP server answers a connection whose request it could not take: a parse error,
 * headers too large, or a request not received within the headers or request timeout. Node
 * writes these itself unless a `clientError` listener exists; ours logs them, so it writes them.
 */
const REFUSALS: Record<string, string> = {
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: '413 Payload Too Large',
};
const BAD_REQUEST = '400 Bad Request';

/** Client errors worth no line: the peer closed or reset the connection (its own business). */
const PEER_GONE = new Set(['ECONNRESET', 'EPIPE']);

/**
 * A connection that has sent nothing yet when the headers timeout ends it. Node answers it with
 * a 408 like a stalled request, but it is a pooled client's spare connection: undici, for one,
 * opens a connection for a queued request, hands the request to another that freed up first,
 * and keeps the new one idle in its pool with no timer of its own. The 408 then races the
 * pool's next request on that connection and is read as that request's answer: a status with
 * no GraphQL answer, which a client must not take for the request's outcome. A bare close is
 * what an idle keep-alive connection gets, and every client retries a request it wrote into
 * one on a fresh connection (the SDK does: a lost answer, the same idempotency key).
 */
function neverSentAByte(code: string, socket: Socket): boolean {
  return code === 'ERR_HTTP_REQUEST_TIMEOUT' && socket.bytesRead === 0;
}

/**
 * Logs every connection the server refused before a request reached the gateway, with how
 * long the socket had lived and what it had carried, then answers as Node would. Without it a
 * request cut by the request timeout (a client trickling its body, or a stall on the way in)
 * leaves no trace on the server: its client sees a 408 that no request line explains.
 *
 * `answering` maps a socket to its in-flight response: once that response's headers are out,
 * writing a status line would corrupt it, so the socket is only destroyed.
 */
export function logClientErrors(input: {
  server: Server;
  log: Logger;
  answering: WeakMap<Socket, ServerResponse>;
}): void {
  const { server, log, answering } = input;
  const openedAt = new WeakMap<Socket, number>();
  server.on('connection', (socket: Socket) => openedAt.set(socket, performance.now()));
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    const code = error.code ?? 'UNKNOWN';
    if (neverSentAByte(code, socket)) {
      socket.destroy();
      return;
    }
    if (!PEER_GONE.has(code)) {
      const opened = openedAt.get(socket);
      log.warn(
        {
          code,
          socketAgeMs: opened === undefined ? null : Math.round(performance.now() - opened),
          bytesRead: socket.bytesRead,
          bytesWritten: socket.bytesWritten,
          answering: answering.has(socket),
        },
        'client request refused',
      );
    }
    const inFlight = answering.get(socket);
    if (socket.writable && (inFlight === undefined || !inFlight.headersSent)) {
      const status = REFUSALS[code] ?? BAD_REQUEST;
      // As Node does: the write goes out at once on a writable socket, before the destroy.
      socket.write(`HTTP/1.1 ${status}\r\nConnection: close\r\n\r\n`);
    }
    socket.destroy();
  });
}
