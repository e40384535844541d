/**
 * Apollo Client type policies for the gateway's types (docs/api.md §3.2, ADR 0041): a plain
 * object of the shape `new InMemoryCache({ typePolicies })` takes, so the SDK needs no
 * dependency on @apollo/client.
 *
 * A replay answers the state stored with its key, not the payment as it is now: after a
 * capture, a retried createPayment still answers REQUIRES_CAPTURE. Apollo's cache keeps one
 * object per payment, `Payment:<id>`, and lets the last answer written over it win, so that
 * replay would make every cache-first read of the payment say REQUIRES_CAPTURE again. A type
 * policy's `merge` cannot stop it: for a normalised type Apollo hands `merge` two references,
 * and writes the incoming fields over the object regardless. So the policy acts where the
 * payment is identified, before anything is written: an answer older than the payment the cache
 * holds (a lower `version`) is kept apart, under `Payment:<id>@v<version>`. The mutation's
 * result still reads as it was answered; every read of the payment still reads the newer state.
 *
 * Select `version` wherever a Payment is selected (the SDK's documents do). Without it on both
 * sides, `updatedAt` orders them when it differs; without either, the newest answer written wins,
 * as in a cache without these policies. Two answers of version 0 (stored before versions were
 * kept) cannot be ordered either.
 */

/** An object in the cache, or a reference to one, as Apollo's `readField` takes it. */
export type CacheObjectOrReference = { readonly __ref: string } | Readonly<Record<string, unknown>>;

/** The part of Apollo's `KeyFieldsContext` the policy uses. */
export interface PaymentKeyContext {
  /** A field of the object being identified, or (`from`) of an object already in the cache. */
  readField(fieldName: string, from?: CacheObjectOrReference): unknown;
}

interface PaymentState {
  version: number | undefined;
  updatedAt: number | undefined;
}

function stateOf(read: (field: string) => unknown): PaymentState {
  const version = read('version');
  const updatedAt = read('updatedAt');
  const instant = typeof updatedAt === 'string' ? Date.parse(updatedAt) : Number.NaN;
  return {
    version: typeof version === 'number' ? version : undefined,
    updatedAt: Number.isNaN(instant) ? undefined : instant,
  };
}

/** Whether `incoming` is an older state than `current`; false when the two cannot be ordered. */
function isOlder(incoming: PaymentState, current: PaymentState): boolean {
  if (incoming.version !== undefined && current.version !== undefined) {
    // Equal: the same state, or (both 0, stored before versions were kept) unknown.
    return incoming.version < current.version;
  }
  if (incoming.updatedAt !== undefined && current.updatedAt !== undefined) {
    return incoming.updatedAt < current.updatedAt;
  }
  return false;
}

/**
 * The cache id of a Payment: `Payment:<id>`, as Apollo's default, unless the answer shows an
 * older state than the one the cache holds there; then an id of that state's own.
 */
function paymentCacheId(
  _object: Readonly<Record<string, unknown>>,
  context: PaymentKeyContext,
): string | undefined {
  const id = context.readField('id');
  if (typeof id !== 'string') return undefined; // not normalised, as without the policy
  const current = `Payment:${id}`;
  const incoming = stateOf((field) => context.readField(field));
  const held = stateOf((field) => context.readField(field, { __ref: current }));
  if (!isOlder(incoming, held)) return current;
  return incoming.version !== undefined
    ? `${current}@v${incoming.version}`
    : `${current}@${new Date(incoming.updatedAt!).toISOString()}`;
}

/** `new InMemoryCache({ typePolicies: paymentsTypePolicies })`, or spread into your own. */
export const paymentsTypePolicies = {
  Payment: { keyFields: paymentCacheId },
} as const;
