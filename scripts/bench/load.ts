/**
 * The load generator: undici's Pool (one connection per request in flight, no pipelining, so
 * a slow answer holds its own connection as a real client's would), `count` requests with
 * `concurrency` in flight, bounded in time as well as in count, each request bounded too. It
 * runs in the bench process, whose CPU is reported as "load": it shares the cores with the
 * systems, so a cheap client (undici's, not fetch's) keeps the comparison about the servers.
 */
import { Pool } from 'undici';
import type { Reply, Target } from './targets.ts';

/** A request that has had no answer by then is an error, not a hang of the whole bench. */
const REQUEST_TIMEOUT_MS = 30_000;
/** Errors kept verbatim for the report; the rest are only counted. */
const ERROR_SAMPLES = 3;
/** The bench loads only what it started itself, on this machine. */
const LOOPBACK = '127.0.0.1';

/** What a load got; a phase's rounds add to one. */
export class LoadResult {
  done = 0;
  seconds = 0;
  /** Latency of every answered request (errors included), in ms. */
  latenciesMs: number[] = [];
  replayed = 0;
  inUse = 0;
  errors = 0;
  errorSamples: string[] = [];
  /** Keys that got a payment (for replays of them later). */
  succeededKeys: string[] = [];
  /** The phase stopped on its time limit before its count. */
  cutShort = false;
}

/** Sends the load; what it got is added to `result` (a phase's earlier rounds), or a new one. */
export async function runLoad(
  spec: {
    target: Target;
    concurrency: number;
    count: number;
    limitMs: number;
    key: (i: number) => string;
  },
  result = new LoadResult(),
): Promise<LoadResult> {
  const origin = new URL(spec.target.url);
  if (origin.hostname !== LOOPBACK) throw new Error(`refusing to load ${origin.origin}`);
  const pool = new Pool(origin.origin, {
    connections: spec.concurrency,
    pipelining: 1,
    headersTimeout: REQUEST_TIMEOUT_MS,
    bodyTimeout: REQUEST_TIMEOUT_MS,
  });
  let next = 0;
  const started = performance.now();
  const deadline = started + spec.limitMs;
  const worker = async () => {
    while (next < spec.count) {
      if (performance.now() >= deadline) {
        result.cutShort = true;
        return;
      }
      const key = spec.key(next++);
      const t0 = performance.now();
      const reply = await send(pool, spec.target, key);
      result.latenciesMs.push(performance.now() - t0);
      result.done += 1;
      if (reply.kind === 'succeeded') {
        if (reply.replayed) result.replayed += 1;
        result.succeededKeys.push(key);
      } else if (reply.kind === 'in_use') {
        result.inUse += 1;
      } else {
        result.errors += 1;
        if (result.errorSamples.length < ERROR_SAMPLES) result.errorSamples.push(reply.detail);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: spec.concurrency }, worker));
  } finally {
    result.seconds += (performance.now() - started) / 1000;
    await pool.close();
  }
  return result;
}

async function send(pool: Pool, target: Target, key: string): Promise<Reply> {
  try {
    const { path, headers, body } = target.request(key);
    const response = await pool.request({ method: 'POST', path, headers, body });
    const text = await response.body.text();
    return target.judge({ status: response.statusCode, headers: response.headers, text });
  } catch (error) {
    return { kind: 'error', detail: error instanceof Error ? error.message : String(error) };
  }
}
