/**
 * The logical operations of a run, drawn from the seed before anything starts. An operation on
 * an existing payment names the createPayment it acts on by index; its payment id is only known
 * once that create is final, so the client waits for it (see clients.ts).
 */
import { Prng } from './prng.ts';

export type TenantName = 'a' | 'b';
export type OperationKind = 'create' | 'capture' | 'refund' | 'cancel';

/** The sandbox tokens (docs/api.md §4) and what the provider does with each. */
export const TOKEN_WEIGHTS = {
  pm_card_visa: 38,
  pm_card_mastercard: 12,
  pm_card_declined: 8,
  pm_card_unavailable: 8,
  pm_card_slow: 5,
  pm_card_lost_response: 7,
  pm_card_timeout: 7,
  pm_card_unknown: 5,
  pm_card_unreachable: 4,
  /** Well-formed but unknown to the provider: FAILED / INVALID_PAYMENT_METHOD. */
  pm_card_chaos_unissued: 2,
} as const;
export type Token = keyof typeof TOKEN_WEIGHTS;

/** Tokens whose charge the provider always makes and approves, sooner or later. */
export const APPROVING_TOKENS: ReadonlySet<Token> = new Set([
  'pm_card_visa',
  'pm_card_mastercard',
  'pm_card_unavailable',
  'pm_card_slow',
  'pm_card_lost_response',
  'pm_card_timeout',
  'pm_card_unknown',
]);

/** Minor units per currency; amounts are drawn in minor units and written at this scale. */
const CURRENCY_SCALE = { EUR: 2, USD: 2, JPY: 0 } as const;
type Currency = keyof typeof CURRENCY_SCALE;

export interface CreateOp {
  index: number;
  kind: 'create';
  tenant: TenantName;
  key: string;
  amountMinor: number;
  currency: Currency;
  token: Token;
  captureMethod: 'AUTOMATIC' | 'MANUAL';
  /** Unique per operation: the auditor finds the payment and its charge by it. */
  reference: string;
  /** Index of the create on the other tenant that shares this key, if any. */
  sharedKeyWith: number | null;
}

export interface FollowUpOp {
  index: number;
  kind: 'capture' | 'refund' | 'cancel';
  tenant: TenantName;
  key: string;
  /** The createPayment whose payment this acts on. */
  target: number;
  /** Minor units; null = all of it (capture) or not applicable (cancel). */
  amountMinor: number | null;
  /** Sent by the tenant that does not own the payment: must be PAYMENT_NOT_FOUND. */
  foreign: boolean;
  /**
   * Sent as soon as the payment's id is known (an OUTCOME_PENDING names it), not once the
   * create is final: it meets the payment still PROCESSING, or races its final phase.
   */
  early: boolean;
}

export type PlannedOp = (CreateOp | FollowUpOp) & {
  /** Extra sends of the same request after its final answer (replays to compare). */
  replays: number;
  /** Copies of the first request sent at once (a client that double-submits). */
  copies: number;
};

const OP_WEIGHTS = { create: 66, capture: 10, refund: 11, cancel: 6, foreign: 4, shared: 3 };
/** Follow-ups pick their payment among this many latest creates: recent, so rarely waited on. */
const TARGET_WINDOW = 60;
/** Share of follow-ups sent as soon as their payment's id is known. */
const EARLY_SHARE = 0.2;
/** Share of follow-ups that get a racing second operation on the same payment. */
const RACE_SHARE = 0.25;
const RACES: Record<FollowUpOp['kind'], ReadonlyArray<FollowUpOp['kind']>> = {
  capture: ['cancel', 'capture', 'refund'],
  cancel: ['capture', 'cancel'],
  refund: ['refund', 'refund', 'capture'],
};

/**
 * Keys and references put letters between the seed and the index ("c-1456554487-op123"): the
 * card-number screen reads digits joined by a dash as one number, and a seed and an index
 * joined that way would pass its Luhn check one time in ten.
 */
export function planOperations(input: { seed: number; count: number }): PlannedOp[] {
  const { seed, count } = input;
  const rng = Prng.derive(seed, 'plan');
  const ops: PlannedOp[] = [];
  const creates: CreateOp[] = [];
  const extras = () => ({
    replays: rng.chance(0.15) ? rng.int(1, 2) : 0,
    copies: rng.chance(0.1) ? 2 : 1,
  });
  const newCreate = (draft: { tenant: TenantName; key: string; index: number }): CreateOp => {
    const { tenant, key, index } = draft;
    const currency = rng.pick(['EUR', 'EUR', 'USD', 'JPY'] as const);
    return {
      index,
      kind: 'create',
      tenant,
      key,
      currency,
      amountMinor: currency === 'JPY' ? rng.int(100, 90_000) : rng.int(100, 99_999),
      token: rng.weighted(TOKEN_WEIGHTS),
      captureMethod: rng.chance(0.35) ? 'MANUAL' : 'AUTOMATIC',
      reference: `chaos-${seed}-op${index}`,
      sharedKeyWith: null,
    };
  };
  const pushCreate = (op: CreateOp) => {
    ops.push({ ...op, ...extras() });
    creates.push(op);
  };

  while (ops.length < count) {
    const kind = creates.length < 5 ? 'create' : rng.weighted(OP_WEIGHTS);
    const tenant: TenantName = rng.chance(0.55) ? 'a' : 'b';
    // A shared pair needs two places: the last operation is then a plain create.
    if (kind === 'create' || (kind === 'shared' && ops.length + 2 > count)) {
      pushCreate(newCreate({ tenant, key: `c-${seed}-op${ops.length}`, index: ops.length }));
      continue;
    }
    if (kind === 'shared') {
      // One key, two tenants, two different commands: two independent payments.
      const key = `s-${seed}-op${ops.length}`;
      const first = newCreate({ tenant: 'a', key, index: ops.length });
      const second = newCreate({ tenant: 'b', key, index: ops.length + 1 });
      pushCreate({ ...first, sharedKeyWith: second.index });
      pushCreate({ ...second, sharedKeyWith: first.index });
      continue;
    }
    const recent = creates.slice(-TARGET_WINDOW);
    const foreign = kind === 'foreign';
    const followKind = foreign ? rng.pick(['capture', 'refund', 'cancel'] as const) : kind;
    const target = pickTarget({ rng, recent, kind: followKind });
    // Sometimes a second operation on the same payment right behind the first, under its own
    // key: the two race (capture against cancel, refund against refund) in the engine.
    const racing =
      !foreign && ops.length + 2 <= count && rng.chance(RACE_SHARE)
        ? [followKind, rng.pick(RACES[followKind])]
        : [followKind];
    for (const raceKind of racing) {
      ops.push({
        index: ops.length,
        kind: raceKind,
        // A foreign operation comes from the tenant that does not own the payment.
        tenant: foreign ? (target.tenant === 'a' ? 'b' : 'a') : target.tenant,
        key: `${raceKind}-${seed}-op${ops.length}`,
        target: target.index,
        amountMinor: followUpAmount({ rng, kind: raceKind, target }),
        foreign,
        early: rng.chance(EARLY_SHARE),
        ...extras(),
      });
    }
  }
  return ops;
}

function pickTarget(input: { rng: Prng; recent: CreateOp[]; kind: FollowUpOp['kind'] }): CreateOp {
  const { rng, recent, kind } = input;
  // Mostly payments the operation can succeed on; sometimes not, for stored refusals.
  const wantManual = kind === 'refund' ? rng.chance(0.15) : rng.chance(0.9);
  const fitting = recent.filter((op) => (op.captureMethod === 'MANUAL') === wantManual);
  return rng.pick(fitting.length > 0 ? fitting : recent);
}

function followUpAmount(input: {
  rng: Prng;
  kind: FollowUpOp['kind'];
  target: CreateOp;
}): number | null {
  const { rng, kind, target } = input;
  const amount = target.amountMinor;
  switch (kind) {
    case 'cancel':
      return null;
    case 'capture': {
      const roll = rng.next();
      if (roll < 0.45) return null;
      if (roll < 0.9) return rng.int(1, amount);
      return amount + rng.int(1, 100); // AMOUNT_EXCEEDS_CAPTURABLE
    }
    case 'refund':
      // Several refunds on one payment may together exceed it: the later ones are refused.
      return rng.chance(0.1) ? amount : rng.int(1, Math.max(1, Math.floor(amount / 2)));
  }
}

/** The decimal string of `minor` units in `currency`, as the API takes it ("10.50"). */
export function formatMinor(minor: number, currency: string): string {
  const scale = CURRENCY_SCALE[currency as Currency];
  if (scale === 0) return String(minor);
  const digits = String(minor).padStart(scale + 1, '0');
  return `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}
