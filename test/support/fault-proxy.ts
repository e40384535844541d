/**
 * A TCP proxy in front of the gateway that loses requests and answers the way networks do, each
 * request's fate drawn from a seeded PRNG (which request meets which fault replays from the
 * seed; exact timings do not):
 *
 * - `drop-response`: the request reaches the gateway, which runs it; its answer is cut off on
 *   the way back (the client's socket closed as the first byte arrives). The case idempotency
 *   keys exist for: the work is done and the client cannot know.
 * - `reset-before`: the connection is reset before any byte reaches the gateway.
 * - `reset-after`: the request is forwarded, then the connection is reset a few ms later —
 *   before, during or after the gateway's work.
 * - `delay`: the request is held, then forwarded; a hold past the client's attempt timeout
 *   makes the request arrive after its client gave up (and maybe after its retry).
 *
 * HTTP/1.1 without pipelining: a request starts with the first client bytes after the
 * gateway's last answer, so a kept-alive connection meets a fresh draw per request.
 * Only 127.0.0.1; close() destroys every socket it holds.
 */
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { Prng } from '../chaos/prng.ts';

export type FaultKind = 'pass' | 'drop-response' | 'reset-before' | 'reset-after' | 'delay';

export interface FaultProxy {
  /** http://127.0.0.1:<port>: the gateway's URL, through the proxy. */
  url: string;
  /** Requests per fate, `pass` included. */
  counts: Record<FaultKind, number>;
  /** Requests that met a fault (every fate but `pass`). */
  faults(): number;
  close(): Promise<void>;
}

export interface FaultProxyOptions {
  /** The gateway's base URL (http://127.0.0.1:<port>). */
  target: string;
  seed: number;
  /** Relative weights of each fate. */
  weights: Record<FaultKind, number>;
  /** A `delay` holds its request for a uniform draw in this range. */
  delayMs: { min: number; max: number };
  /** A `reset-after` resets its connection this long (uniform) after forwarding the request. */
  resetAfterMs?: { min: number; max: number };
  /** The fates of the first requests, in order, before the draws begin (a test's exact case). */
  script?: FaultKind[];
}

const DEFAULT_RESET_AFTER_MS = { min: 0, max: 25 };

export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const target = new URL(options.target);
  if (target.hostname !== '127.0.0.1') throw new Error('the fault proxy only fronts 127.0.0.1');
  const rng = Prng.derive(options.seed, 'fault-proxy');
  const counts: Record<FaultKind, number> = {
    pass: 0,
    'drop-response': 0,
    'reset-before': 0,
    'reset-after': 0,
    delay: 0,
  };
  const script = [...(options.script ?? [])];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, run: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timers.add(timer);
  };
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    // Resets are the point here: a socket's error is expected, never a test failure.
    socket.on('error', () => undefined);
  };

  const server = createServer((client) => {
    track(client);
    const upstream = connect(Number(target.port), '127.0.0.1');
    track(upstream);
    let fate: FaultKind = 'pass';
    /** The gateway has answered since the last request began: the next bytes start a new one. */
    let answered = true;
    /** A `delay`'s bytes, until its hold ends. */
    let held: Buffer[] | null = null;

    client.on('data', (chunk: Buffer) => {
      if (answered) {
        answered = false;
        fate = script.shift() ?? rng.weighted(options.weights);
        counts[fate] += 1;
        if (fate === 'reset-before') {
          client.resetAndDestroy();
          upstream.destroy();
          return;
        }
        if (fate === 'delay') {
          const queue: Buffer[] = [];
          held = queue;
          later(rng.int(options.delayMs.min, options.delayMs.max), () => {
            // Forwarded even if the client left meanwhile: the late request still arrives.
            for (const part of queue) upstream.write(part);
            held = null;
            if (client.destroyed) upstream.end();
          });
        }
        if (fate === 'reset-after') {
          const window = options.resetAfterMs ?? DEFAULT_RESET_AFTER_MS;
          later(rng.int(window.min, window.max), () => {
            client.resetAndDestroy();
            upstream.destroy();
          });
        }
      }
      if (held !== null) held.push(chunk);
      else upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      answered = true;
      if (fate === 'drop-response') {
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    upstream.on('close', () => client.destroy());
    client.on('close', () => {
      if (held === null) upstream.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    faults: () =>
      counts['drop-response'] + counts['reset-before'] + counts['reset-after'] + counts.delay,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const timer of timers) clearTimeout(timer);
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
