// The clock of the provider's books: a charge's createdAt and a statement's completeUntil both
// read it. It never runs backwards (a wall-clock step back is held at the last reading), so a
// charge recorded after a statement was cut can never be stamped inside the period that
// statement already declared complete.

export interface BooksClock {
  /** Epoch ms, never less than any earlier reading of this clock. */
  nowMs(): number;
}

export function createBooksClock(): BooksClock {
  let latestMs = 0;
  return {
    nowMs() {
      latestMs = Math.max(latestMs, Date.now());
      return latestMs;
    },
  };
}
