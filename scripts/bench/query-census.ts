/**
 * Preloaded into the gateway by `npm run bench -- --profile` (never in production): counts every
 * statement the process sends through pg, and the time from sending it to its answer being
 * handled (round trip plus any event-loop delay), per statement text. On SIGUSR2 it writes the
 * running totals to BENCH_QUERY_CENSUS_FILE as `{ seq, tallies }`; the bench takes a snapshot at
 * both ends of each phase and subtracts.
 */
import { renameSync, writeFileSync } from 'node:fs';
import pg from 'pg';

export interface Tally {
  count: number;
  totalMs: number;
}

const file = process.env['BENCH_QUERY_CENSUS_FILE'];
const tallies: Record<string, Tally> = {};
let seq = 0;

function record(text: string, ms: number): void {
  const tally = (tallies[text] ??= { count: 0, totalMs: 0 });
  tally.count += 1;
  tally.totalMs += ms;
}

type Query = (this: pg.Client, ...args: unknown[]) => unknown;
// Taken off the prototype on purpose: it is called back with each client as `this`.
// eslint-disable-next-line @typescript-eslint/unbound-method
const original = pg.Client.prototype.query as unknown as Query;

/** Several statements sent in one round trip (pipelined-statements.ts): one entry for them all. */
interface Batch {
  statements: ReadonlyArray<{ text: string }>;
  results: ReadonlyArray<Promise<unknown>>;
}

function isBatch(value: unknown): value is Batch {
  return typeof value === 'object' && value !== null && 'results' in value && 'statements' in value;
}

function censusQuery(this: pg.Client, ...args: unknown[]): unknown {
  const first = args[0];
  if (isBatch(first)) {
    const text = first.statements.map((s) => s.text.trim().replace(/\s+/g, ' ')).join(' ⏎ ');
    const started = performance.now();
    const done = () => record(text, performance.now() - started);
    void Promise.allSettled(first.results).then(done);
    return original.apply(this, args);
  }
  const text =
    typeof first === 'string' ? first : ((first as { text?: string } | null)?.text ?? '(other)');
  const started = performance.now();
  const last = args.at(-1);
  if (typeof last === 'function') {
    const callback = last as (...results: unknown[]) => unknown;
    args[args.length - 1] = function (this: unknown, ...results: unknown[]) {
      record(text, performance.now() - started);
      return callback.apply(this, results);
    };
    return original.apply(this, args);
  }
  const result = original.apply(this, args);
  if (result instanceof Promise) {
    result.then(
      () => record(text, performance.now() - started),
      () => record(text, performance.now() - started),
    );
  }
  return result;
}

if (file !== undefined) {
  (pg.Client.prototype as unknown as { query: Query }).query = censusQuery;
  process.on('SIGUSR2', () => {
    seq += 1;
    // Written aside, then renamed: the bench never reads half a file.
    writeFileSync(`${file}.tmp`, JSON.stringify({ seq, tallies }));
    renameSync(`${file}.tmp`, file);
  });
}
