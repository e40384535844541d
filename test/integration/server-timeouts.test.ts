import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { paymentOf } from '../support/graphql-client.ts';
import { createPaymentOn, paymentInput, TENANT_A, useTestStack } from '../support/test-stack.ts';

/**
 * The server's request timeout cuts a client that trickles its body, and only that: a request
 * received in time may take longer to answer (a slow provider) and is answered.
 */
const REQUEST_TIMEOUT_MS = 1_500;
/** The sandbox's slow card answers after this: longer than the request timeout. */
const SLOW_PROVIDER_MS = 3_000;
/** A body of this many bytes at one a second would take far longer than any wait below. */
const TRICKLED_BODY_BYTES = 60;
/** Bounds the wait for the server to close the trickling socket. */
const CLOSE_DEADLINE_MS = 20_000;
const lines: Array<Record<string, unknown>> = [];
const stack = useTestStack('server_timeouts', {
  sandbox: { slowMs: SLOW_PROVIDER_MS },
  app: {
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    providerTimeoutMs: 10_000,
    logLevel: 'warn',
    logDestination: { write: (line: string) => void lines.push(JSON.parse(line) as never) },
  },
});

interface Trickled {
  closedBy: 'server' | 'deadline';
  bytesSent: number;
  answer: string;
}

/** Sends a request's headers, then its body a byte a second, until the socket closes. */
function trickle(url: string): Promise<Trickled> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let answer = '';
    let bytesSent = 0;
    let ticker: NodeJS.Timeout | undefined;
    const finish = (closedBy: Trickled['closedBy']) => {
      clearInterval(ticker);
      clearTimeout(deadline);
      socket.destroy();
      resolve({ closedBy, bytesSent, answer });
    };
    const deadline = setTimeout(() => finish('deadline'), CLOSE_DEADLINE_MS);
    socket.on('error', reject);
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('close', () => finish('server'));
    socket.on('connect', () => {
      socket.write(
        `POST /graphql HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${TENANT_A.apiKey}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${TRICKLED_BODY_BYTES}\r\n\r\n`,
      );
      ticker = setInterval(() => {
        if (bytesSent < TRICKLED_BODY_BYTES - 1) {
          socket.write(' ');
          bytesSent += 1;
        }
      }, 1_000);
    });
  });
}

/** Opens a connection and sends nothing: what comes back before the server closes it. */
function idleConnection(url: string): Promise<{ closedBy: 'server' | 'deadline'; answer: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let answer = '';
    const finish = (closedBy: 'server' | 'deadline') => {
      clearTimeout(deadline);
      socket.destroy();
      resolve({ closedBy, answer });
    };
    const deadline = setTimeout(() => finish('deadline'), CLOSE_DEADLINE_MS);
    socket.on('error', reject);
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('close', () => finish('server'));
  });
}

describe('server timeouts', () => {
  it('closes the socket of a client trickling its body, with 408', async () => {
    const result = await trickle(stack.app.url);
    expect(result.closedBy).toBe('server');
    expect(result.bytesSent).toBeLessThan(TRICKLED_BODY_BYTES - 1);
    expect(result.answer).toMatch(/^(HTTP\/1\.1 408 |$)/);
  });

  it('closes a connection that never sent a byte without an answer a pool could misread', async () => {
    // A pooled client's spare connection: a 408 on it would race the pool's next request.
    lines.length = 0;
    const result = await idleConnection(stack.app.url);
    expect(result).toEqual({ closedBy: 'server', answer: '' });
    expect(lines.filter((line) => line['msg'] === 'client request refused')).toEqual([]);
  });

  it('logs the request it refused, with what the socket carried', async () => {
    lines.length = 0;
    await trickle(stack.app.url);
    const refused = lines.filter((line) => line['msg'] === 'client request refused');
    expect(refused).toHaveLength(1);
    // Its headers arrived, so its handler was reading the body when the timeout cut it.
    expect(refused[0]).toMatchObject({
      level: 40,
      code: 'ERR_HTTP_REQUEST_TIMEOUT',
      answering: true,
    });
    expect(refused[0]?.['bytesRead']).toBeGreaterThan(0);
    expect(refused[0]?.['socketAgeMs']).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS);
  });

  it('answers a request that was received in time however long the provider takes', async () => {
    const answer = await createPaymentOn(
      stack,
      paymentInput('slow-provider-1', { paymentMethod: 'pm_card_slow' }),
    );
    expect(answer.status).toBe(200);
    expect(paymentOf(answer).status).toBe('SUCCEEDED');
  });
});
