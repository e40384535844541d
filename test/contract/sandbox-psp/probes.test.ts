// The sandbox payment provider's contract, over real HTTP. Probes and inspection: finding a charge
// or a refund by idempotency key or reference, and the operations applied to a charge.
import { describe, expect, it } from 'vitest';
import type { Charge } from '../../../sandbox-psp/sandbox-server.ts';
import { startSandboxPsp } from '../../../sandbox-psp/sandbox-server.ts';
import {
  authorizedCharge,
  capturedCharge,
  chargeBody,
  chargeOf,
  current,
  errorCodeOf,
  get,
  listByReference,
  newKey,
  newReference,
  postCharge,
  postOperation,
  probeByKey,
  probeCaptureByKey,
  probeRefundByKey,
  probeVoidByKey,
  psp,
  refund,
  refundOf,
  toAnswer,
  voidCharge,
  useSandboxPsp,
} from '../support/sandbox-psp-contract.ts';

useSandboxPsp();

describe('probes and inspection', () => {
  it('lists every charge for a reference, declines included, oldest first', async () => {
    const reference = newReference();
    const approved = await postCharge({ key: newKey(), body: chargeBody({ reference }) });
    const unavailable = chargeBody({ reference, paymentMethod: 'pm_card_unavailable' });
    expect((await postCharge({ key: newKey(), body: unavailable })).status).toBe(503);
    const declinedBody = chargeBody({ reference, paymentMethod: 'pm_card_declined' });
    const declined = await postCharge({ key: newKey(), body: declinedBody });
    const listing = await listByReference(reference);
    expect(listing.status).toBe(200);
    expect(listing.json).toEqual({ data: [chargeOf(approved), chargeOf(declined)] });
    expect(psp.charges({ reference })).toEqual([chargeOf(approved), chargeOf(declined)]);
  });

  it('requires the reference query parameter', async () => {
    const answer = await get('/v1/charges');
    expect(answer.status).toBe(400);
    expect(errorCodeOf(answer)).toBe('INVALID_REQUEST');
  });

  it('finds a charge by URL-encoded idempotency key', async () => {
    const key = `${newKey()}/with spaces?&#`;
    const created = await postCharge({ key, body: chargeBody() });
    const probe = await probeByKey(key);
    expect(probe.status).toBe(200);
    expect(probe.json).toEqual(created.json);
  });

  it('answers 404 CHARGE_NOT_FOUND for a key it never charged', async () => {
    const probe = await probeByKey(newKey());
    expect(probe.status).toBe(404);
    expect(probe.json).toEqual({ error: { code: 'CHARGE_NOT_FOUND' } });
  });

  it('reports health', async () => {
    const answer = await get('/v1/health');
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ ok: true });
  });

  it('answers JSON 404 for unknown routes and 405 for wrong methods', async () => {
    const unknown = await get('/v1/refunds');
    expect(unknown.status).toBe(404);
    expect(errorCodeOf(unknown)).toBe('NOT_FOUND');
    const wrongMethod = await toAnswer(await fetch(`${psp.url}/v1/charges`, { method: 'DELETE' }));
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toContain('POST');
  });
});

describe('refund probes and operation inspection', () => {
  it('finds a refund by URL-encoded idempotency key', async () => {
    const charge = await capturedCharge('10.00');
    const key = `${newKey()}/with spaces?&#`;
    const refunded = await refund({ chargeId: charge.id, amount: '1.00', key });
    const probe = await probeRefundByKey(key);
    expect(probe.status).toBe(200);
    expect(probe.json).toEqual({ refund: refundOf(refunded) });
  });

  it('answers 404 REFUND_NOT_FOUND for keys that refunded nothing', async () => {
    const charge = await capturedCharge('10.00');
    const refusedKey = newKey();
    expect((await refund({ chargeId: charge.id, amount: '99.00', key: refusedKey })).status).toBe(
      422,
    );
    const voidKey = newKey();
    await voidCharge({ chargeId: charge.id, key: voidKey });
    for (const key of [newKey(), refusedKey, voidKey]) {
      const probe = await probeRefundByKey(key);
      expect(probe.status).toBe(404);
      expect(probe.json).toEqual({ error: { code: 'REFUND_NOT_FOUND' } });
    }
  });

  it('finds a capture and a void by the key they were applied under', async () => {
    const captured = await authorizedCharge('10.00');
    const captureKey = `${newKey()}/cap ?&#`;
    await postOperation({
      chargeId: captured.id,
      path: 'capture',
      key: captureKey,
      body: { amount: '4' },
    });
    const capture = await probeCaptureByKey(captureKey);
    expect(capture.status).toBe(200);
    expect(capture.json).toEqual({
      capture: {
        id: expect.stringMatching(/^cap_[0-9a-f]+$/) as unknown,
        kind: 'capture',
        chargeId: captured.id,
        amount: '4.00',
        idempotencyKey: captureKey,
        createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) as unknown,
      },
    });
    const voided = await authorizedCharge('3.00');
    const voidKey = newKey();
    await voidCharge({ chargeId: voided.id, key: voidKey });
    expect((await probeVoidByKey(voidKey)).json).toEqual({
      void: {
        id: expect.stringMatching(/^vo_[0-9a-f]+$/) as unknown,
        kind: 'void',
        chargeId: voided.id,
        amount: null,
        idempotencyKey: voidKey,
        createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) as unknown,
      },
    });
    // Each kind answers for its own: the void's key captured nothing, the capture's voided nothing.
    expect((await probeCaptureByKey(voidKey)).json).toEqual({
      error: { code: 'CAPTURE_NOT_FOUND' },
    });
    expect((await probeVoidByKey(captureKey)).json).toEqual({ error: { code: 'VOID_NOT_FOUND' } });
  });

  it('answers 404 for a capture or void that was refused or never sent', async () => {
    const charge = await capturedCharge('10.00');
    const refusedKey = newKey();
    const refused = await postOperation({
      chargeId: charge.id,
      path: 'capture',
      key: refusedKey,
      body: { amount: '1' },
    });
    expect(refused.status).toBe(409);
    for (const key of [refusedKey, newKey()]) {
      const probe = await probeCaptureByKey(key);
      expect(probe.status).toBe(404);
      expect(probe.json).toEqual({ error: { code: 'CAPTURE_NOT_FOUND' } });
    }
    expect((await probeVoidByKey(newKey())).status).toBe(404);
  });

  it('lists no refunds for a charge without any', async () => {
    const charge = await capturedCharge('10.00');
    const listing = await get(`/v1/charges/${charge.id}/refunds`);
    expect(listing.status).toBe(200);
    expect(listing.json).toEqual({ data: [] });
  });

  it('keeps a charge probe for the key "refunds" a charge probe', async () => {
    const created = await postCharge({ key: 'refunds', body: chargeBody() });
    expect((await probeByKey('refunds')).json).toEqual(created.json);
  });

  it('answers 405 with Allow to wrong methods on the operation paths', async () => {
    const charge = await authorizedCharge('10.00');
    const cases: [string, string, string][] = [
      ['capture', 'GET', 'POST'],
      ['void', 'GET', 'POST'],
      ['refunds', 'DELETE', 'POST, GET'],
    ];
    for (const [path, method, allow] of cases) {
      const url = `${psp.url}/v1/charges/${charge.id}/${path}`;
      const answer = await toAnswer(await fetch(url, { method }));
      expect(answer.status).toBe(405);
      expect(answer.headers.get('allow')).toBe(allow);
    }
    expect(current(charge)).toEqual(charge);
  });

  it('filters refunds and operations by charge', async () => {
    const local = await startSandboxPsp();
    try {
      const create = async (): Promise<Charge> =>
        chargeOf(await postCharge({ baseUrl: local.url, key: newKey(), body: chargeBody() }));
      const [a, b] = [await create(), await create()];
      const keys = [newKey(), newKey(), newKey()];
      const body = { amount: '1.00' };
      for (const [chargeId, key] of [
        [a.id, keys[0]],
        [b.id, keys[1]],
        [a.id, keys[2]],
      ] as const) {
        await postOperation({ baseUrl: local.url, chargeId, path: 'refunds', key, body });
      }
      expect(local.refunds().map((r) => r.idempotencyKey)).toEqual(keys);
      expect(local.refunds({ chargeId: a.id }).map((r) => r.idempotencyKey)).toEqual([
        keys[0],
        keys[2],
      ]);
      expect(local.operations({ chargeId: b.id })).toEqual([
        { kind: 'refund', idempotencyKey: keys[1], applied: true },
      ]);
      expect(local.operations()).toHaveLength(3);
    } finally {
      await local.close();
    }
  });
});
