/**
 * Names JavaScript code addresses in a `perf` sample by the time the sample was taken, from the
 * jitdump file V8 writes under `node --perf-prof` (jit-<pid>.dump; the format is perf's,
 * tools/perf/Documentation/jitdump-specification.txt).
 *
 * Why not `--perf-basic-prof`'s /tmp/perf-<pid>.map: it lists every piece of code ever
 * compiled, without times. Code that dies (start-up code whose bytecode is flushed, optimised
 * code thrown away) leaves its address to new code, and the map then has two names for one
 * address. perf picks one, and in the bench it named many of the gateway's samples after
 * libraries that only run at start-up (MikroORM's migrator, lodash, knex). Here each load is
 * stamped with CLOCK_MONOTONIC, the clock `perf record -k CLOCK_MONOTONIC` stamps samples with,
 * so an address is named by the code that was there when the sample was taken.
 */
import { readFileSync } from 'node:fs';

const MAGIC = 0x4a695444; // 'JiTD'
const CODE_LOAD = 0;
const CODE_MOVE = 1;

interface Load {
  start: bigint;
  end: bigint;
  /** When it was loaded, µs on CLOCK_MONOTONIC. */
  atUs: number;
  name: string;
}

export class JitCode {
  private readonly loads: Load[];
  /** The largest piece of code: how far below an address a load covering it can start. */
  private readonly maxSize: bigint;

  private constructor(loads: Load[]) {
    this.loads = loads.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
    this.maxSize = loads.reduce((max, l) => (l.end - l.start > max ? l.end - l.start : max), 0n);
  }

  /** The code loads of a jitdump file; null when there is no such file. */
  static read(path: string): JitCode | null {
    let buffer: Buffer;
    try {
      buffer = readFileSync(path);
    } catch {
      return null;
    }
    if (buffer.length < 40 || buffer.readUInt32LE(0) !== MAGIC) return null;
    const loads: Load[] = [];
    let at = buffer.readUInt32LE(8); // the header's own size
    while (at + 16 <= buffer.length) {
      const id = buffer.readUInt32LE(at);
      const size = buffer.readUInt32LE(at + 4);
      if (size < 16 || at + size > buffer.length) break; // a record cut short by the exit
      const atUs = Number(buffer.readBigUInt64LE(at + 8) / 1000n);
      if (id === CODE_LOAD) {
        const codeAddr = buffer.readBigUInt64LE(at + 32);
        const codeSize = buffer.readBigUInt64LE(at + 40);
        const nameStart = at + 56;
        const found = buffer.indexOf(0, nameStart);
        const nameEnd = found < 0 || found > at + size ? at + size : found;
        const name = buffer.toString('utf8', nameStart, nameEnd);
        loads.push({ start: codeAddr, end: codeAddr + codeSize, atUs, name });
      } else if (id === CODE_MOVE) {
        const oldAddr = buffer.readBigUInt64LE(at + 32);
        const newAddr = buffer.readBigUInt64LE(at + 40);
        const codeSize = buffer.readBigUInt64LE(at + 48);
        const moved = loads.findLast((l) => l.start === oldAddr);
        if (moved !== undefined) {
          loads.push({ start: newAddr, end: newAddr + codeSize, atUs, name: moved.name });
        }
      }
      at += size;
    }
    return new JitCode(loads);
  }

  /** The name of the code at `address` at time `atUs` (µs, CLOCK_MONOTONIC), if any. */
  nameAt(address: bigint, atUs: number): string | undefined {
    // The last load starting at or below the address, then back over every load that could
    // still cover it; of those that do, the latest loaded before the sample.
    let low = 0;
    let high = this.loads.length - 1;
    let last = -1;
    while (low <= high) {
      const mid = (low + high) >> 1;
      if ((this.loads[mid]?.start ?? 0n) <= address) {
        last = mid;
        low = mid + 1;
      } else high = mid - 1;
    }
    let best: Load | undefined;
    for (let i = last; i >= 0; i--) {
      const load = this.loads[i];
      if (load === undefined || load.start + this.maxSize <= address) break;
      if (load.end > address && load.atUs <= atUs && (best === undefined || load.atUs > best.atUs))
        best = load;
    }
    return best?.name;
  }
}
