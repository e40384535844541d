/**
 * Where a process's CPU time goes, from `perf record -e cpu-clock -g` of a Node process run
 * with `--perf-basic-prof`: each sample is time the process was on a core, attributed to the
 * innermost frame that belongs to a layer of the request path (cpu-profile-layers.ts), else to
 * what runs without JavaScript on the stack (the garbage collector, V8's compilers, the event
 * loop and the kernel under it). µs per request.
 *
 * Unlike `node --cpu-prof`, which samples on the wall clock and charges a thread that waits for
 * a core to the frame it was preempted in (mostly the syscall that woke another process), this
 * counts only time on a core, on every thread of the process (V8's compiler and GC helpers
 * included). Needs `perf` (linux-perf) and a perf_event_paranoid that lets it watch the pid.
 *
 *   npx tsx scripts/bench/on-cpu-layers.ts PERF_DATA REQUESTS [TOP]
 *
 * TOP: print only the TOP largest layers.
 */
import { execFileSync } from 'node:child_process';
import { LAYERS } from './cpu-profile-layers.ts';

interface Sample {
  mainThread: boolean;
  periodNs: number;
  /** Symbols, innermost first. */
  frames: string[];
}

/**
 * `perf script -F pid,tid,period,ip,sym` output: a header line (`pid/tid period`), then one
 * indented line per frame. The main thread's tid is the pid.
 */
export function parsePerfScript(text: string): Sample[] {
  const samples: Sample[] = [];
  let current: Sample | null = null;
  for (const line of text.split('\n')) {
    if (line.trim() === '') {
      current = null;
      continue;
    }
    if (current === null) {
      const [ids = '', period] = line.trim().split(/\s+/);
      const [pid, tid] = ids.split('/');
      current = { mainThread: pid === tid, periodNs: Number(period), frames: [] };
      samples.push(current);
      continue;
    }
    // "<address> <symbol>", the symbol possibly with spaces.
    current.frames.push(line.trim().replace(/^[0-9a-f]+\s+/, ''));
  }
  return samples;
}

/**
 * The URL of a JIT frame as --perf-basic-prof names it: `JS:<tier><function> <url>:<line>:<col>`
 * (a node internal's URL is `node:…`).
 */
function urlOf(frame: string): string | null {
  if (!frame.startsWith('JS:')) return null;
  const last = frame.slice(frame.lastIndexOf(' ') + 1);
  return last.replace(/:\d+:\d+$/, '');
}

/** What a sample with no layer on its stack was doing, by its innermost frames. */
function withoutLayer(sample: Sample): string {
  const text = sample.frames.join('\n');
  if (/Scaveng|MarkCompact|ConcurrentMarking|Sweeper|Heap::|MinorMC/.test(text)) return 'GC';
  if (/compiler::|Compiler|Maglev|turboshaft|CompileLazy/.test(text)) return 'V8 compilers';
  if (!sample.mainThread) return 'other threads (libuv, platform)';
  if (sample.frames.some((frame) => frame.startsWith('JS:'))) return 'other JavaScript';
  if (/uv__|epoll/.test(text)) return 'event loop (libuv, kernel)';
  return 'other native';
}

function layerOf(sample: Sample): string {
  for (const frame of sample.frames) {
    const url = urlOf(frame);
    if (url === null) continue;
    const layer = LAYERS.find(([, pattern]) => pattern.test(url));
    if (layer !== undefined) return layer[0];
    if (url.startsWith('node:'))
      return `node internals (${url.replace(/^node:(internal\/)?/, '')})`;
  }
  return withoutLayer(sample);
}

export function onCpuLayers(samples: Sample[]): Map<string, number> {
  const byLayer = new Map<string, number>();
  for (const sample of samples) {
    const layer = layerOf(sample);
    byLayer.set(layer, (byLayer.get(layer) ?? 0) + sample.periodNs);
  }
  return byLayer;
}

function main(): void {
  const [data, requestsArg, topArg] = process.argv.slice(2);
  const requests = Number(requestsArg);
  const top = topArg === undefined ? Infinity : Number(topArg);
  if (data === undefined || !(requests > 0) || !(top > 0)) {
    console.error('usage: on-cpu-layers.ts PERF_DATA REQUESTS [TOP]');
    process.exit(2);
  }
  const text = execFileSync('perf', ['script', '-i', data, '-F', 'pid,tid,period,ip,sym'], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const samples = parsePerfScript(text);
  const byLayer = onCpuLayers(samples);
  const totalNs = [...byLayer.values()].reduce((sum, ns) => sum + ns, 0);
  const mainNs = samples.filter((s) => s.mainThread).reduce((sum, s) => sum + s.periodNs, 0);
  const us = (ns: number) => (ns / 1000 / requests).toFixed(1).padStart(8);
  console.log(`${us(totalNs)} µs a request on a core (${us(mainNs).trim()} on the main thread)`);
  for (const [layer, ns] of [...byLayer].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${us(ns)}  ${((100 * ns) / totalNs).toFixed(1).padStart(5)}%  ${layer}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) main();
