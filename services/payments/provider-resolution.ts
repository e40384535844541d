import type { OwnedRequest } from '../../lib/idempotency/owned-request.ts';
import type { Probed } from '../provider/contract.ts';

/** A re-send after a probe found nothing is only worth making with at least this much time left. */
const MIN_RESEND_BUDGET_MS = 100;

/** What one attempt at a provider effect came to, beside its final outcomes. */
export type Attempted<Final> =
  Final | { kind: 'unavailable'; retryAfterSeconds: number } | { kind: 'timeout' };

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
  const left = () => deadline - Date.now();
  if (!effect.resumed) {
    const sent = await request.external(() => effect.send({ timeoutMs: effect.timeoutMs }));
    if (sent.kind !== 'timeout') return sent;
  }
  const probed = await request.external(() =>
    effect.probe({ timeoutMs: Math.max(1, Math.min(effect.timeoutMs, left())) }),
  );
  switch (probed.kind) {
    case 'found':
      return probed.outcome;
    case 'timeout':
      return { kind: 'timeout' };
    case 'missing':
      if (left() < MIN_RESEND_BUDGET_MS) return { kind: 'timeout' };
      // Safe because the key is the same: an earlier attempt still in flight at the provider
      // is joined, not repeated.
      return request.external(() => effect.send({ timeoutMs: left() }));
  }
}
