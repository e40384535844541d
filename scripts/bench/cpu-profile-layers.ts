/**
 * Reads a V8 CPU profile (`node --cpu-prof`) and attributes each sample to a layer of the
 * request path: the first frame, from the sampled one up its stack, that belongs to a known
 * layer. Node internals and V8 builtins (streams, timers, JSON.parse) are charged to the layer
 * that called them; what no layer called (the event loop reading sockets, the HTTP parser's
 * callbacks) is named by its own Node module. Stacks are synchronous: work after an `await`
 * is charged to whoever resumes, which is the right owner for continuation code.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Ordered: the first that matches a frame's URL names it. */
export const LAYERS: Array<[string, RegExp]> = [
  ['graphql-js (parse, validate, execute)', /\/node_modules\/graphql\//],
  // With the libraries it calls per request: content negotiation of the Accept header.
  ['Apollo Server', /\/node_modules\/(@apollo\/|negotiator\/|whatwg-mimetype\/)/],
  ['tRPC', /\/node_modules\/@trpc\//],
  ['zod', /\/node_modules\/zod\//],
  [
    'pg driver',
    // With the product's own protocol code beside it: statements batched into one round trip.
    /\/node_modules\/(pg|pg-protocol|pg-pool|pg-types|postgres-\w+|pg-cloudflare)\/|\/lib\/db\/(pipelined-statements|batching-transaction|prepared-client)\.[jt]s/,
  ],
  ['prom-client (metrics)', /\/node_modules\/prom-client\//],
  [
    'logging (pino)',
    /\/node_modules\/(pino|pino-std-serializers|@pinojs\/redact|quick-format-unescaped|sonic-boom|thread-stream)\/|^(?!.*\/node_modules\/).*\/lib\/logging\//,
  ],
  ['fetch/undici (provider call)', /undici/],
  ['node:http server (parse, write)', /^node:_http_|^node:http$/],
  ['gateway/http (routing, auth)', /\/gateway\/http\//],
  ['gateway/graphql (resolvers, plugins)', /\/gateway\/graphql\//],
  ['engine (lib/idempotency)', /^(?!.*\/node_modules\/).*\/lib\/idempotency\//],
  // lib/ is also a common folder inside packages: only the project's own counts.
  ['lib other (db, outbox, money)', /^(?!.*\/node_modules\/).*\/lib\//],
  ['payments service', /\/services\/payments\//],
  ['provider service', /\/services\/provider\//],
  ['other services', /\/services\//],
  ['other node_modules', /\/node_modules\//],
];

/** V8's pseudo-frames. A Map: a function named `constructor` or `toString` is not one of them. */
const SPECIAL = new Map<string, string>([
  ['(garbage collector)', 'GC'],
  ['(idle)', 'idle'],
  ['(program)', 'V8 (program)'],
]);

/**
 * Per node id, its layer: the first frame from it up its stack that belongs to a known layer,
 * else the innermost Node internal module, named by itself. Walked from the root down, each
 * node passing its own (or its caller's) to its children.
 */
function layersByNode(profile: CpuProfile): Map<number, string> {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const layers = new Map<number, string>();
  const called = new Set(profile.nodes.flatMap((node) => node.children ?? []));
  const roots = profile.nodes.filter((node) => !called.has(node.id));
  const stack = roots.map((node) => ({ node, known: '', internal: '' }));
  for (let at = stack.pop(); at !== undefined; at = stack.pop()) {
    const { url, functionName } = at.node.callFrame;
    const known = LAYERS.find(([, pattern]) => pattern.test(url))?.[0] ?? at.known;
    const internal = url.startsWith('node:')
      ? `node internals (${url.replace(/^node:(internal\/)?/, '')})`
      : at.internal;
    layers.set(
      at.node.id,
      SPECIAL.get(functionName) || known || internal || 'node internals (other)',
    );
    for (const id of at.node.children ?? []) {
      const node = byId.get(id);
      if (node) stack.push({ node, known, internal });
    }
  }
  return layers;
}

export function readProfile(path: string): CpuProfile {
  return JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
}

/**
 * µs of samples per layer in the windows [from, to) (µs on the profile's monotonic clock), and
 * all of them but idle.
 */
export function layerTimes(
  profile: CpuProfile,
  windows: Array<{ from: number; to: number }>,
): { byLayer: Map<string, number>; busyUs: number } {
  const layers = layersByNode(profile);
  const byLayer = new Map<string, number>();
  let t = profile.startTime;
  let busyUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    if (!windows.some((w) => t >= w.from && t < w.to)) continue;
    // A sample stands for the time until the next one.
    const weight = Math.max(0, profile.timeDeltas[i + 1] ?? 0);
    const layer = layers.get(profile.samples[i] ?? -1) ?? 'unknown';
    byLayer.set(layer, (byLayer.get(layer) ?? 0) + weight);
    if (layer !== 'idle') busyUs += weight;
  }
  return { byLayer, busyUs };
}
