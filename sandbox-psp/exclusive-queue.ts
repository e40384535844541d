// One queue per id (an Idempotency-Key, a charge id): work for an id starts only after every
// earlier piece of work for that id has settled, so a read-then-write on that id can never
// interleave with another across an await.

export interface ExclusiveQueue {
  /** Runs `work` after every earlier piece of work for the same id has settled. */
  runExclusive<T>(id: string, work: () => Promise<T>): Promise<T>;
}

export function createExclusiveQueue(): ExclusiveQueue {
  // Tail of each id's queue. Entries are removed once their queue drains so the map does not
  // grow with every id ever seen.
  const queueTails = new Map<string, Promise<void>>();

  return {
    runExclusive(id, work) {
      const previous = queueTails.get(id) ?? Promise.resolve();
      // A failed predecessor must not block or fail its successors: they re-read the state.
      const run = previous.then(work);
      const tail = run.then(
        () => undefined,
        () => undefined,
      );
      queueTails.set(id, tail);
      void tail.then(() => {
        if (queueTails.get(id) === tail) queueTails.delete(id);
      });
      return run;
    },
  };
}
