/**
 * What a Node process allocates, from V8's sampling heap profiler over the inspector protocol,
 * with the objects the garbage collector has already freed counted too (what `--heap-prof`
 * leaves out, and what a collector's cost follows). Needs Node 20's `--experimental-websocket`.
 *
 *   NODE_OPTIONS=--experimental-websocket npx tsx scripts/bench/allocation-sample.ts \
 *     record INSPECT_PORT OUT.heapprofile      # samples until SIGINT, then writes the profile
 *   npx tsx scripts/bench/allocation-sample.ts report OUT.heapprofile REQUESTS
 *
 * The process must run with `--inspect=127.0.0.1:INSPECT_PORT` (harness-replay-rounds.sh
 * --alloc does both). `report` prints bytes a request by the innermost package or product
 * folder on the allocating stack, and the functions that allocate most themselves.
 */
import { readFileSync, writeFileSync } from 'node:fs';

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

/** Bytes between two samples: one allocation in about this many is recorded, scaled up. */
const SAMPLING_INTERVAL_BYTES = 16 * 1024;

async function record(port: string, out: string): Promise<void> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{
    webSocketDebuggerUrl: string;
  }>;
  const url = targets[0]?.webSocketDebuggerUrl;
  if (url === undefined) throw new Error(`no inspector target on port ${port}`);
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve);
    socket.addEventListener('error', reject);
  });
  let lastId = 0;
  const answers = new Map<number, (result: unknown) => void>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
    if (message.id !== undefined) answers.get(message.id)?.(message.result);
  });
  const send = (method: string, params: object = {}) =>
    new Promise<unknown>((resolve) => {
      const id = ++lastId;
      answers.set(id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
  await send('HeapProfiler.enable');
  await send('HeapProfiler.startSampling', {
    samplingInterval: SAMPLING_INTERVAL_BYTES,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  console.log('sampling');
  await new Promise((resolve) => process.once('SIGINT', resolve));
  const { profile } = (await send('HeapProfiler.stopSampling')) as { profile: { head: unknown } };
  writeFileSync(out, JSON.stringify(profile));
  socket.close();
}

/** The innermost frame's package (node_modules) or product folder (two levels under dist/). */
function ownerOf(stack: ProfileNode['callFrame'][]): string {
  for (let i = stack.length - 1; i >= 0; i--) {
    const url = stack[i]?.url ?? '';
    if (url === '' || url.startsWith('node:')) continue;
    const module = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(url);
    if (module) return module[1]!;
    return /dist\/([^/]+\/[^/.]+)/.exec(url)?.[1] ?? url;
  }
  return 'node internals, native';
}

function report(path: string, requests: number): void {
  const { head } = JSON.parse(readFileSync(path, 'utf8')) as { head: ProfileNode };
  const byOwner = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  const walk = (node: ProfileNode, stack: ProfileNode['callFrame'][]) => {
    const here = [...stack, node.callFrame];
    if (node.selfSize > 0) {
      total += node.selfSize;
      const owner = ownerOf(here);
      byOwner.set(owner, (byOwner.get(owner) ?? 0) + node.selfSize);
      const { functionName, url, lineNumber } = node.callFrame;
      const name = `${functionName || '(anonymous)'} ${url.replace(/.*\/(node_modules\/)?/, '')}:${lineNumber}`;
      byFunction.set(name, (byFunction.get(name) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child, here);
  };
  walk(head, []);
  const kb = (bytes: number) => (bytes / 1024 / requests).toFixed(1).padStart(7);
  console.log(`${kb(total)} KB allocated a request`);
  for (const [owner, bytes] of [...byOwner].sort((a, b) => b[1] - a[1]).slice(0, 20)) {
    console.log(`${kb(bytes)}  ${((100 * bytes) / total).toFixed(1).padStart(5)}%  ${owner}`);
  }
  console.log('the functions that allocate most themselves:');
  for (const [name, bytes] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 12)) {
    console.log(`${kb(bytes)}  ${name}`);
  }
}

const [command, first, second] = process.argv.slice(2);
if (command === 'record' && first !== undefined && second !== undefined) {
  await record(first, second);
} else if (command === 'report' && first !== undefined && Number(second) > 0) {
  report(first, Number(second));
} else {
  console.error('usage: allocation-sample.ts record PORT OUT | report OUT REQUESTS');
  process.exit(2);
}
