// The sandbox payment provider's contract, over real HTTP. SANDBOX_KEY_RETENTION_SECONDS: a key
// older than the retention is a new key, as at real providers (Stripe forgets after 24 hours),
// and every request kind sent under it again acts again; the probes still find what it made.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxPsp, type SandboxPsp } from '../../../sandbox-psp/sandbox-server.ts';
import {
  chargeBody,
  chargeOf,
  isReplay,
  newKey,
  pause,
  postCharge,
  postOperation,
  refundOf,
  toAnswer,
  type Answer,
} from '../support/sandbox-psp-contract.ts';

/**
 * Short enough for a test to outlive, long enough that a prompt retry is still a replay on a
 * loaded machine (one local call, well under a second).
 */
const RETENTION_MS = 1_000;

let forgetful: SandboxPsp;
beforeAll(async () => {
  forgetful = await startSandboxPsp({ port: 0, keyRetentionMs: RETENTION_MS });
});
afterAll(async () => {
  await forgetful.close();
});

/** Requests go to this file's own sandbox, the forgetful one. */
const at = {
  get baseUrl() {
    return forgetful.url;
  },
};
const probe = async (path: string): Promise<Answer> =>
  toAnswer(await fetch(`${forgetful.url}${path}`));

describe('a key past the retention', () => {
  it('charges again, and the probe finds the newest charge', async () => {
    const key = newKey();
    const body = chargeBody({ amount: '5.00' });
    const first = await postCharge({ key, body, ...at });
    const prompt = await postCharge({ key, body, ...at });
    expect(isReplay(prompt)).toBe(true);
    expect(chargeOf(prompt).id).toBe(chargeOf(first).id);

    await pause(RETENTION_MS + 50);
    const late = await postCharge({ key, body, ...at });
    expect(isReplay(late)).toBe(false);
    expect(chargeOf(late).id).not.toBe(chargeOf(first).id);
    expect(forgetful.charges({ reference: body.reference })).toHaveLength(2);
    const found = await probe(`/v1/charges/by-idempotency-key/${encodeURIComponent(key)}`);
    expect(chargeOf(found).id).toBe(chargeOf(late).id);
  });

  it('refunds again, while the probe still finds the first refund until then', async () => {
    const charge = chargeOf(
      await postCharge({ key: newKey(), body: chargeBody({ amount: '9.00' }), ...at }),
    );
    const key = newKey();
    const refund = () =>
      postOperation({ chargeId: charge.id, path: 'refunds', key, body: { amount: '1' }, ...at });
    const first = await refund();
    await pause(RETENTION_MS + 50);
    expect(refundOf(await probe(`/v1/refunds/by-idempotency-key/${key}`))).toEqual(refundOf(first));
    const late = await refund();
    expect(isReplay(late)).toBe(false);
    expect(forgetful.refunds({ chargeId: charge.id })).toHaveLength(2);
  });

  it('decides a capture again: the charge, captured once, refuses it', async () => {
    const charge = chargeOf(
      await postCharge({
        key: newKey(),
        body: chargeBody({ amount: '9.00', capture: false }),
        ...at,
      }),
    );
    const key = newKey();
    const capture = () =>
      postOperation({ chargeId: charge.id, path: 'capture', key, body: { amount: '9' }, ...at });
    expect((await capture()).status).toBe(200);
    await pause(RETENTION_MS + 50);
    const late = await capture();
    expect(late.status).toBe(409);
    expect(late.json).toEqual({ error: { code: 'INVALID_CHARGE_STATE' } });
    expect((await probe(`/v1/captures/by-idempotency-key/${key}`)).status).toBe(200);
  });
});
