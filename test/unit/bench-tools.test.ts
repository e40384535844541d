import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBenchArgs } from '../../scripts/bench/args.ts';
import { runLoad } from '../../scripts/bench/load.ts';
import { onCpuLayers, parsePerfScript } from '../../scripts/bench/on-cpu-layers.ts';
import { parsePgbench } from '../../scripts/bench/pgbench.ts';
import { baselineTarget } from '../../scripts/bench/targets.ts';

/** What pgbench 15 prints at the end of a `--time` run (the lines the bench reads among them). */
const PGBENCH_OUTPUT = `pgbench (15.20 (Debian 15.20-0+deb12u1))
transaction type: /tmp/pgw-pgbench-x/commit.sql
scaling factor: 1
query mode: prepared
number of clients: 4
number of threads: 2
maximum number of tries: 1
duration: 2 s
number of transactions actually processed: 3071
number of failed transactions: 0 (0.000%)
latency average = 2.601 ms
initial connection time = 11.386 ms
tps = 1537.864016 (without initial connection time)
`;

describe('pgbench output', () => {
  it('gives tps without connection time and mean latency', () => {
    expect(parsePgbench(PGBENCH_OUTPUT)).toEqual({ tps: 1537.864016, latencyMs: 2.601 });
  });

  it('is an error without a tps line, not a rate of NaN', () => {
    expect(() => parsePgbench('pgbench: error: connection refused')).toThrow(/no tps line/);
  });
});

describe('on-CPU layers from perf script', () => {
  // Three samples of pid 7: the main thread in zod under tRPC, the main thread in the kernel
  // under a write the pg driver made, and a V8 helper thread scavenging.
  const text = [
    '7/7     1000000 ',
    '\t    7f01 Builtins_LoadIC',
    '\t    7f02 JS:*inst._zod.parse file:///srv/node_modules/zod/v4/core/schemas.js:159:23',
    '\t    7f03 JS:* file:///srv/node_modules/@trpc/server/dist/initTRPC.mjs:162:3',
    '',
    '7/7     2000000 ',
    '\tffff01 pvm_irq_enable',
    '\t    7f04 JS:*writevGeneric node:internal/stream_base_commons:123:23',
    '\t    7f05 JS:*submit file:///srv/dist/lib/db/pipelined-statements.js:74:11',
    '',
    '7/9     500000 ',
    '\t    c001 v8::internal::Scavenger::ScavengeObject<v8::internal::FullHeapObjectSlot>',
    '',
  ].join('\n');

  it('charges each sample, by its period, to the innermost layer or node module on its stack', () => {
    const samples = parsePerfScript(text);
    expect(samples.map((s) => [s.mainThread, s.periodNs])).toEqual([
      [true, 1_000_000],
      [true, 2_000_000],
      [false, 500_000],
    ]);
    expect(Object.fromEntries(onCpuLayers(samples))).toEqual({
      zod: 1_000_000,
      'node internals (stream_base_commons)': 2_000_000,
      GC: 500_000,
    });
  });
});

describe('bench options', () => {
  it('--help asks for the usage instead of a run', () => {
    expect(parseBenchArgs(['--help'])).toBeUndefined();
  });

  it('refuses concurrencies and counts outside their bounds', () => {
    expect(() => parseBenchArgs(['--concurrency', '0'])).toThrow(/--concurrency/);
    expect(() => parseBenchArgs(['--concurrency', '4,1000'])).toThrow(/--concurrency/);
    expect(() => parseBenchArgs(['--requests', '1e9'])).toThrow(/--requests/);
  });

  it('--quick keeps an explicit request count and concurrency', () => {
    const options = parseBenchArgs(['--quick', '--concurrency', '4', '--requests', '500']);
    expect(options).toMatchObject({ concurrencies: [4], requests: 500, rounds: 1 });
  });
});

/**
 * A stand-in for a baseline's POST /payments: answers every key once as a new payment, its
 * copies as replays, `busy-*` keys as in use, and `broken-*` keys with a 500.
 */
function fakeBaseline(): Server {
  const seen = new Set<string>();
  return createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const { idempotencyKey: key } = JSON.parse(body) as { idempotencyKey: string };
      if (key.startsWith('busy-')) {
        res.writeHead(409).end('{}');
      } else if (key.startsWith('broken-')) {
        res.writeHead(500).end('{"error":"boom"}');
      } else {
        const replayed = seen.has(key);
        seen.add(key);
        res.writeHead(200, replayed ? { 'idempotent-replayed': 'true' } : {});
        res.end(JSON.stringify({ payment: { status: 'SUCCEEDED' } }));
      }
    });
  });
}

describe('the load generator', () => {
  const server = fakeBaseline();
  let url = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const target = () => baselineTarget({ name: 'reference', url, tenantId: 't' });

  it('sends count requests with concurrency in flight and sorts the answers', async () => {
    const keys = ['a', 'b', 'a', 'busy-1', 'broken-1', 'c'];
    const load = await runLoad({
      target: target(),
      concurrency: 1,
      count: keys.length,
      limitMs: 10_000,
      key: (i) => keys[i] ?? 'none',
    });
    expect(load).toMatchObject({ done: 6, replayed: 1, inUse: 1, errors: 1, cutShort: false });
    expect(load.succeededKeys).toEqual(['a', 'b', 'a', 'c']);
    expect(load.errorSamples[0]).toMatch(/^HTTP 500/);
    expect(load.latenciesMs).toHaveLength(6);
  });

  it('stops at its time limit', async () => {
    const load = await runLoad({
      target: target(),
      concurrency: 4,
      count: 1_000_000,
      limitMs: 50,
      key: (i) => `k-${i}`,
    });
    expect(load.cutShort).toBe(true);
    expect(load.done).toBeLessThan(1_000_000);
  });

  it('refuses a target that is not on 127.0.0.1, before any connection', async () => {
    const remote = baselineTarget({ name: 'bare', url: 'http://192.0.2.1:80', tenantId: 't' });
    await expect(
      runLoad({ target: remote, concurrency: 1, count: 1, limitMs: 1_000, key: () => 'k' }),
    ).rejects.toThrow(/refusing/);
  });
});
