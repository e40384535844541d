/**
 * The chaos suite's only source of randomness. Every choice that shapes a run — the operations,
 * their tokens and amounts, each client's backoff jitter, the fault schedule — is drawn from a
 * stream derived from the run's seed, so a failing seed replays the same schedule. (Which
 * request a SIGKILL lands on still depends on timing; what is killed, when in the run and how
 * often does not.) Math.random is never used here.
 */

/** mulberry32: 32 bits of state, fast, and good enough to pick schedules (not for crypto). */
export class Prng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A stream of its own for one consumer, so adding draws to one stream leaves others intact. */
  static derive(seed: number, label: string): Prng {
    return new Prng(hash32(`${seed >>> 0}/${label}`));
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** Uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }

  /** One of `weights`' keys, with probability proportional to its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const entries = Object.entries(weights) as Array<[K, number]>;
    const total = entries.reduce((sum, [, weight]) => sum + weight, 0);
    let roll = this.next() * total;
    for (const [key, weight] of entries) {
      roll -= weight;
      if (roll < 0) return key;
    }
    const last = entries[entries.length - 1];
    if (last === undefined) throw new Error('weighted pick from no weights');
    return last[0];
  }
}

/** FNV-1a, 32 bits: turns a label into a seed. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
