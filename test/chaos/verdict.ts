/** The auditor's vocabulary: the invariants it checks and the violations it reports. */

export const INVARIANTS = {
  final: 'every operation got a final answer the contract allows',
  charges: 'one successful provider charge per succeeded payment, none for failed ones',
  effects: 'one provider effect per succeeded capture/refund/cancel, none for refused ones',
  ledger: 'one set of ledger postings per operation, receipts once, ledger balanced',
  webhooks: 'one event per effect; every webhook delivered, signed, redelivered unchanged',
  replays: 'every answer for a key equals its first final answer',
  acknowledged:
    'no lost acknowledgement: every answer a client got is still in the database (its key finished, the payment or operation it names present)',
  tenants: 'no cross-tenant leak (shared keys independent, foreign ids not found)',
  commands: 'answers and payments match the command sent',
  unfinished: 'no idempotency record left unfinished (started or unknown)',
  unknown: 'UNKNOWN only where the provider never answered',
  processes: 'no gateway died on its own (every fault survived but the SIGKILLs)',
} as const;
export type Invariant = keyof typeof INVARIANTS;

export interface Violation {
  invariant: Invariant;
  detail: string;
}

/** Collects violations; one line per finding, grouped by invariant in the report. */
export class Findings {
  readonly violations: Violation[] = [];
  /** When the client received each answer found lost (ms since the epoch), for the evidence. */
  readonly lostAnswersReceivedAt: number[] = [];

  add(invariant: Invariant, detail: string): void {
    this.violations.push({ invariant, detail });
  }

  /** Adds a violation when `ok` is false; returns `ok`. */
  check(invariant: Invariant, ok: boolean, detail: () => string): boolean {
    if (!ok) this.add(invariant, detail());
    return ok;
  }

  of(invariant: Invariant): Violation[] {
    return this.violations.filter((v) => v.invariant === invariant);
  }
}

const SCALE: Record<string, number> = { EUR: 2, USD: 2, JPY: 0 };

/** Minor units of a decimal string ("10.5" or "10.50" EUR → 1050n). */
export function minorOf(amount: string, currency: string): bigint {
  const scale = SCALE[currency] ?? 2;
  const [whole = '0', fraction = ''] = amount.split('.');
  return (
    BigInt(whole) * 10n ** BigInt(scale) +
    BigInt((fraction + '0'.repeat(scale)).slice(0, scale) || '0')
  );
}
