import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../support/test-database.ts';
import { TENANT_A, useTestStackOn } from '../support/test-stack.ts';

/**
 * The edge's hold on connections (docs/api.md §1.3): a key is checked from the headers before
 * any of the body is read, a body must arrive within its deadline once the key is good, and a
 * server holds at most MAX_CONNECTIONS. Raw sockets, so that what is sent, and when, is ours.
 */
const BODY_TIMEOUT_MS = 1_000;
/** Bounds each exchange: far past the body deadline, far short of the request timeout (24 s). */
const EXCHANGE_DEADLINE_MS = 8_000;
/** A body this long, a byte every TRICKLE_INTERVAL_MS, would take 12 s. */
const TRICKLED_BODY_BYTES = 60;
const TRICKLE_INTERVAL_MS = 200;
const MAX_CONNECTIONS = 3;

const database = useTestDatabase('edge_connections');
const stack = useTestStackOn(database, { app: { bodyTimeoutMs: BODY_TIMEOUT_MS } });
const capped = useTestStackOn(database, { app: { maxConnections: MAX_CONNECTIONS } });

interface Exchanged {
  closedBy: 'server' | 'deadline';
  /** Body bytes written before the answer's first byte arrived. */
  bodyBytesBeforeAnswer: number;
  answer: string;
}

/**
 * Sends `head` (request line and headers), then the body a byte at a time (or not at all), and
 * collects what comes back until the server closes the socket or the deadline passes.
 */
function exchange(url: string, head: string, trickle: boolean): Promise<Exchanged> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let answer = '';
    let sent = 0;
    let bodyBytesBeforeAnswer: number | null = null;
    let ticker: NodeJS.Timeout | undefined;
    const finish = (closedBy: Exchanged['closedBy']) => {
      clearInterval(ticker);
      clearTimeout(deadline);
      socket.destroy();
      resolve({ closedBy, bodyBytesBeforeAnswer: bodyBytesBeforeAnswer ?? sent, answer });
    };
    const deadline = setTimeout(() => finish('deadline'), EXCHANGE_DEADLINE_MS);
    socket.on('error', reject);
    socket.on('data', (chunk) => {
      bodyBytesBeforeAnswer ??= sent;
      answer += chunk.toString('latin1');
    });
    socket.on('close', () => finish('server'));
    socket.on('connect', () => {
      socket.write(head);
      if (!trickle) return;
      ticker = setInterval(() => {
        if (sent < TRICKLED_BODY_BYTES - 1 && socket.writable) {
          socket.write(' ');
          sent += 1;
        }
      }, TRICKLE_INTERVAL_MS);
    });
  });
}

const post = (url: string, authorization: string | null) =>
  `POST /graphql HTTP/1.1\r\nHost: ${new URL(url).host}\r\n` +
  (authorization === null ? '' : `Authorization: ${authorization}\r\n`) +
  `Content-Type: application/json\r\nContent-Length: ${TRICKLED_BODY_BYTES}\r\n\r\n`;

describe('authentication before the body', () => {
  it.each([
    ['an unknown key', 'Bearer sk_test_nobody_00000000000000000000000'],
    ['no key', null],
  ])(
    '%s is answered 401 while the body is still unsent, and the connection closed',
    async (_what, authorization) => {
      const result = await exchange(stack.app.url, post(stack.app.url, authorization), false);
      expect(result.answer).toMatch(/^HTTP\/1\.1 401 /);
      expect(result.answer).toMatch(/\r\nconnection: close\r\n/i);
      expect(result.answer).toContain('"code":"UNAUTHENTICATED"');
      expect(result.bodyBytesBeforeAnswer).toBe(0);
      expect(result.closedBy).toBe('server');
    },
  );
});

describe('the body deadline', () => {
  it('cuts a body trickled past it with 408 and closes the connection', async () => {
    const result = await exchange(
      stack.app.url,
      post(stack.app.url, `Bearer ${TENANT_A.apiKey}`),
      true,
    );
    expect(result.closedBy).toBe('server');
    expect(result.answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(result.answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(result.bodyBytesBeforeAnswer).toBeLessThan(TRICKLED_BODY_BYTES - 1);
  });
});

/** A keep-alive connection that has been answered once: accepted and held by the server. */
function heldConnection(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    socket.on('error', reject);
    socket.once('data', () => resolve(socket));
    socket.on('connect', () => socket.write(`GET /healthz HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`));
  });
}

describe('MAX_CONNECTIONS', () => {
  it('closes a connection past the cap unanswered, and takes one again once a slot frees', async () => {
    const url = capped.app.url;
    const held = await Promise.all(
      Array.from({ length: MAX_CONNECTIONS }, () => heldConnection(url)),
    );
    try {
      const refused = await exchange(url, `GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n`, false);
      expect(refused).toEqual({ closedBy: 'server', bodyBytesBeforeAnswer: 0, answer: '' });
      held.pop()?.destroy();
      let answer = '';
      for (let attempt = 0; attempt < 20 && !answer.startsWith('HTTP/1.1 200'); attempt++) {
        ({ answer } = await exchange(
          url,
          `GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
          false,
        ));
      }
      expect(answer).toMatch(/^HTTP\/1\.1 200 /);
      const metrics = await exchange(
        url,
        `GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
        false,
      );
      expect(metrics.answer).toMatch(
        /gateway_connections_dropped_total\{service="gateway"\} [1-9]/,
      );
    } finally {
      for (const socket of held) socket.destroy();
    }
  });
});
