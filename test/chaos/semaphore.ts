/** At most `size` holders at once; the others wait their turn, first come first served. */
export class Semaphore {
  private free: number;
  private readonly queue: Array<() => void> = [];

  constructor(size: number) {
    this.free = size;
  }

  async acquire(): Promise<() => void> {
    if (this.free > 0) this.free -= 1;
    else await new Promise<void>((resolve) => this.queue.push(resolve));
    return () => {
      const next = this.queue.shift();
      if (next !== undefined) next();
      else this.free += 1;
    };
  }
}
