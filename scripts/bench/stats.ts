/** Small numeric helpers for the report. */

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

export function rate(run: { done: number; seconds: number }): number {
  return run.seconds > 0 ? run.done / run.seconds : NaN;
}

export function fixed(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '-';
}
