/**
 * The fetch the clients' SDK sends through: each request goes to a gateway that is up, the way a
 * client follows a service registry — the slot the operation's own stream prefers, else the
 * next one up. While none is (both restarting, or one paused and one restarting) it looks again
 * shortly, until the attempt's signal gives up. Requests pass through the run's HTTP budget
 * (the machine has 2 shared cores), and the answer is read whole inside it.
 *
 * The SDK's attempt timeout covers the wait for the budget and for a gateway, as a client's
 * connection pool would: an attempt queued too long is a timeout, and retried like one.
 */
import type { FetchLike } from '../../packages/client/src/index.ts';
import type { Stats } from './journal.ts';
import type { Prng } from './prng.ts';
import type { Semaphore } from './semaphore.ts';
import type { GatewaySlot } from './stack.ts';

/** No gateway is up: look again this soon. */
const NO_GATEWAY_WAIT_MS = 200;

export function createGatewayFetch(input: {
  slots: readonly GatewaySlot[];
  /** Chooses the preferred slot per request: the operation's own stream. */
  rng: Prng;
  budget?: Semaphore;
  stats?: Stats;
}): FetchLike {
  const { slots, rng, budget, stats } = input;
  return async (url, init) => {
    const path = new URL(url).pathname;
    const preferred = rng.int(0, slots.length - 1);
    let gateway = liveGateway(slots, preferred);
    if (gateway === undefined && stats !== undefined) stats.noGateway += 1;
    while (gateway === undefined) {
      await pause(NO_GATEWAY_WAIT_MS, init.signal);
      gateway = liveGateway(slots, preferred);
    }
    const release = budget === undefined ? () => undefined : await budget.acquire();
    try {
      init.signal.throwIfAborted();
      if (stats !== undefined) stats.requests += 1;
      const response = await fetch(`${gateway}${path}`, init);
      const text = await response.text();
      return {
        status: response.status,
        headers: response.headers,
        text: () => Promise.resolve(text),
      };
    } finally {
      release();
    }
  };
}

/** The URL of the preferred slot's gateway if it is up, else of the next one that is. */
function liveGateway(slots: readonly GatewaySlot[], preferred: number): string | undefined {
  const ordered = [...slots.slice(preferred), ...slots.slice(0, preferred)];
  return ordered.map((slot) => slot.url).find((url) => url !== undefined);
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    signal.throwIfAborted();
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
