/**
 * The load generator: `count` requests with `concurrency` in flight, bounded in time as well as
 * in count, each request bounded too. It runs in the bench process, so it takes its share of
 * the two cores on every side alike.
 */
import type { Reply, Target } from './targets.ts';

/** A request that has had no answer by then is an error, not a hang of the whole bench. */
const REQUEST_TIMEOUT_MS = 30_000;
/** Errors kept verbatim for the report; the rest are only counted. */
const ERROR_SAMPLES = 3;

export interface LoadResult {
  done: number;
  seconds: number;
  /** Latency of every answered request (errors included), in ms. */
  latenciesMs: number[];
  replayed: number;
  inUse: number;
  errors: number;
  errorSamples: string[];
  /** Keys that got a payment (for replays of them later). */
  succeededKeys: string[];
  /** The phase stopped on its time limit before its count. */
  cutShort: boolean;
}

export async function runLoad(spec: {
  target: Target;
  concurrency: number;
  count: number;
  limitMs: number;
  key: (i: number) => string;
}): Promise<LoadResult> {
  const result: LoadResult = {
    done: 0,
    seconds: 0,
    latenciesMs: [],
    replayed: 0,
    inUse: 0,
    errors: 0,
    errorSamples: [],
    succeededKeys: [],
    cutShort: false,
  };
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
      const reply = await send(spec.target, key);
      result.latenciesMs.push(performance.now() - t0);
      result.done += 1;
      record(result, { key, reply });
    }
  };
  await Promise.all(Array.from({ length: spec.concurrency }, worker));
  result.seconds = (performance.now() - started) / 1000;
  return result;
}

async function send(target: Target, key: string): Promise<Reply> {
  try {
    return await target.send(key, AbortSignal.timeout(REQUEST_TIMEOUT_MS));
  } catch (error) {
    return { kind: 'error', detail: error instanceof Error ? error.message : String(error) };
  }
}

function record(result: LoadResult, answered: { key: string; reply: Reply }): void {
  const { key, reply } = answered;
  switch (reply.kind) {
    case 'succeeded':
      if (reply.replayed) result.replayed += 1;
      result.succeededKeys.push(key);
      return;
    case 'in_use':
      result.inUse += 1;
      return;
    case 'error':
      result.errors += 1;
      if (result.errorSamples.length < ERROR_SAMPLES) result.errorSamples.push(reply.detail);
      return;
  }
}
