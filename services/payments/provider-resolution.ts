import type { OwnedRequest } from '../../lib/idempotency/owned-request.ts';
import type { Probed } from '../provider/contract.ts';

/** A call (a probe, a re-send) is only worth making with at least this much time left. */
const MIN_CALL_BUDGET_MS = 100;

/**
 * What one attempt at a provider effect came to, beside its final outcomes. `timeout`: a call
 * went out and got no answer, so the provider may have acted; enough of those make the request
 * unknown. `unasked`: no call of this attempt went out unanswered. Its time went on keeping
 * the lease (each call waits for a heartbeat in flight, and a database failing over holds one
 * for seconds), or a probe's "missing" left too little to send again. The provider has not been
 * left in doubt, so the request is handed on without counting an unanswered attempt.
 */
export type Attempted<Final> =
  Final | { kind: 'unavailable'; retryAfterSeconds: number } | { kind: 'timeout' } | Unasked;

export interface Unasked {
  kind: 'unasked';
}

const TIMEOUT = { kind: 'timeout' } as const;
const UNASKED = { kind: 'unasked' } as const;

/**
 * One provider effect (a charge, a capture, a void, a refund) resolved as far as one provider
 * timeout plus one probe allow, by the request's owner, under its derived key:
 *
 *   new request:      send ─timeout─▶ probe ─found─▶ that outcome
 *   resumed request:          probe ─┤    ─missing─▶ send again, same key, in the time left
 *                                    └──────────────no answer─▶ timeout (the caller releases)
 *
 * A resumed request (a takeover, the recovery worker, reconciliation, an operator's re-drive)
 * asks before it sends: an earlier owner may have reached the provider, and a provider that has
 * forgotten the key by now (Stripe keeps keys 24 hours) would act again on a repeat. Only a
 * provider that says it has nothing under the key licenses sending again. Each call runs with
 * the lease kept alive (OwnedRequest.external), and a request that is no longer ours stops
 * before its next call (LeaseLostError).
 */
export async function resolveWithProvider<Final extends { kind: string }>(
  request: OwnedRequest,
  effect: {
    resumed: boolean;
    /** PROVIDER_TIMEOUT_MS: one call's budget; the whole resolution gets two. */
    timeoutMs: number;
    send(budget: { timeoutMs: number }): Promise<Attempted<Final>>;
    probe(budget: { timeoutMs: number }): Promise<Probed<Final>>;
  },
): Promise<Attempted<Final>> {
  const deadline = Date.now() + 2 * effect.timeoutMs;
  // Each budget is read as its call starts: the lease's heartbeat may have held the attempt
  // before it. Too little left, and the call is not made at all (undefined).
  const within = <T>(call: (timeoutMs: number) => Promise<T>) =>
    request.external(() => {
      const left = deadline - Date.now();
      // Half a provider timeout at most: a setting below the floor still gets its calls made.
      const least = Math.min(MIN_CALL_BUDGET_MS, effect.timeoutMs / 2);
      return left < least ? Promise.resolve(undefined) : call(left);
    });
  // What this attempt leaves when it can ask no further: a send of its own went unanswered.
  const unanswered = effect.resumed ? UNASKED : TIMEOUT;
  if (!effect.resumed) {
    const sent = await request.external(() => effect.send({ timeoutMs: effect.timeoutMs }));
    if (sent.kind !== 'timeout') return sent;
  }
  const probed = await within((left) =>
    effect.probe({ timeoutMs: Math.min(effect.timeoutMs, left) }),
  );
  switch (probed?.kind) {
    case undefined:
      return unanswered;
    case 'found':
      return probed.outcome;
    case 'timeout':
      return TIMEOUT;
    case 'missing':
      // Safe because the key is the same: an earlier attempt still in flight at the provider
      // is joined, not repeated.
      return (await within((left) => effect.send({ timeoutMs: left }))) ?? unanswered;
  }
}
