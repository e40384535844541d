import { describe, expect, it } from 'vitest';
import { errorCodeOf, graphql, paymentOf, type GraphQLAnswer } from '../support/graphql-client.ts';
import { CANCEL_PAYMENT } from '../support/operations.ts';
import { runOpsCli } from '../support/ops-cli.ts';
import {
  createPaymentOn,
  keyRowOf,
  paymentInput,
  TENANT_A,
  TENANT_B,
  useTestStack,
} from '../support/test-stack.ts';

/**
 * The duplicate without a key (seed 002: unique(account_id, merchant_reference)): with a
 * tenant's opt-in reference guard on, a second payment whose reference a live payment (not
 * FAILED or CANCELED) holds is refused with DUPLICATE_REFERENCE, under any key, storing nothing.
 */
const stack = useTestStack('duplicate_reference');

const pay = (key: string, overrides: Record<string, unknown> = {}, apiKey = TENANT_A.apiKey) =>
  createPaymentOn(stack, paymentInput(key, overrides), apiKey);

const cancel = (key: string, paymentId: string) =>
  graphql(stack.app.url, {
    apiKey: TENANT_A.apiKey,
    query: CANCEL_PAYMENT,
    variables: { input: { idempotencyKey: key, paymentId } },
  });

/** The two payments of the first test, authorised under one reference while the guard is off. */
const before: string[] = [];

function guard(tenant: string, enabled: boolean) {
  return stack.app.services.client.ops.setReferenceGuard.mutate({
    tenant,
    enabled,
    actor: 'test',
  });
}

function expectDuplicate(answer: GraphQLAnswer, holder: string): void {
  expect(answer.status).toBe(409);
  expect(errorCodeOf(answer)).toBe('DUPLICATE_REFERENCE');
  expect(answer.body.errors?.[0]?.extensions?.['paymentId']).toBe(holder);
}

describe('the reference guard', () => {
  it('is off by default: two keys, one reference, two payments', async () => {
    for (const key of ['off-1', 'off-2']) {
      before.push(
        paymentOf(await pay(key, { reference: 'order-off', captureMethod: 'MANUAL' })).id,
      );
    }
    expect(new Set(before).size).toBe(2);
  });

  it('refuses turning on while two live payments share a reference, and changes nothing', async () => {
    await expect(guard(TENANT_A.name, true)).rejects.toMatchObject({
      message: expect.stringContaining('share the reference "order-off"') as unknown,
    });
    expect(
      await stack.app.services.client.ops.referenceGuard.query({ tenant: TENANT_A.name }),
    ).toEqual({ tenant: TENANT_A.name, enabled: false });
    // One of the two canceled, the other alone holds the reference: the guard can hold.
    expect((await cancel('off-cancel', before[0]!)).body.errors).toBeUndefined();
    expect(await guard(TENANT_A.name, true)).toMatchObject({ enabled: true, claimed: 1 });
  });

  it('refuses a second live payment under another key, storing and charging nothing', async () => {
    const first = paymentOf(await pay('on-1', { reference: 'order-7' }));
    const second = await pay('on-2', { reference: 'order-7', amount: '3.00' });
    expectDuplicate(second, first.id);
    expect(await keyRowOf(stack.db, 'on-2')).toBeUndefined();
    expect(stack.sandbox.charges({ reference: 'order-7' })).toHaveLength(1);
    // The first key replays; the refused one may be retried and is refused again.
    const replay = await pay('on-1', { reference: 'order-7' });
    expect(paymentOf(replay).id).toBe(first.id);
    expectDuplicate(await pay('on-2', { reference: 'order-7', amount: '3.00' }), first.id);
    // A payment made before the guard was on holds its reference too.
    expectDuplicate(await pay('on-3', { reference: 'order-off' }), before[1]!);
  });

  it('lets the reference go when its payment fails or is canceled', async () => {
    const declined = paymentOf(
      await pay('gone-1', { reference: 'order-8', paymentMethod: 'pm_card_declined' }),
    );
    expect(declined.status).toBe('FAILED');
    const authorised = paymentOf(
      await pay('gone-2', { reference: 'order-8', captureMethod: 'MANUAL' }),
    );
    expect(authorised.status).toBe('REQUIRES_CAPTURE');
    expectDuplicate(await pay('gone-3', { reference: 'order-8' }), authorised.id);
    expect((await cancel('gone-cancel', authorised.id)).body.errors).toBeUndefined();
    expect(paymentOf(await pay('gone-4', { reference: 'order-8' })).status).toBe('SUCCEEDED');
  });

  it('is the tenant’s own: another tenant may use the same reference, guard or not', async () => {
    paymentOf(await pay('ten-a', { reference: 'order-9' }));
    const other = await pay('ten-b', { reference: 'order-9' }, TENANT_B.apiKey);
    expect(paymentOf(other).status).toBe('SUCCEEDED');
    expect(paymentOf(await pay('ten-b2', { reference: 'order-9' }, TENANT_B.apiKey)).id).not.toBe(
      paymentOf(other).id,
    );
  });

  it('makes one payment of a concurrent pair with two keys and one reference', async () => {
    for (let round = 0; round < 5; round++) {
      const reference = `order-race-${round}`;
      const answers = await Promise.all([
        pay(`race-${round}-a`, { reference }),
        pay(`race-${round}-b`, { reference }),
      ]);
      const made = answers.filter((a) => a.body.errors === undefined).map(paymentOf);
      expect(made, `round ${round}`).toHaveLength(1);
      const refused = answers.find((a) => a.body.errors !== undefined)!;
      expectDuplicate(refused, made[0]!.id);
      expect(stack.sandbox.charges({ reference })).toHaveLength(1);
    }
  });

  it('turned off, lets references repeat again', async () => {
    expect(await guard(TENANT_A.name, false)).toMatchObject({ enabled: false });
    const again = await pay('off-again', { reference: 'order-7' });
    expect(paymentOf(again).status).toBe('SUCCEEDED');
  });

  it('is switched by the ops CLI', async () => {
    const on = await runOpsCli(stack.app.url, [
      'reference-guard',
      'on',
      '--tenant',
      TENANT_B.name,
      '--actor',
      'carol',
    ]);
    expect(on.stderr).toMatch(/share the reference "order-9"/);
    expect(on.code).toBe(1);
    const show = await runOpsCli(stack.app.url, [
      'reference-guard',
      'show',
      '--tenant',
      TENANT_B.name,
    ]);
    expect(show.stdout.trim()).toBe(`reference guard of ${TENANT_B.name}: off`);
  });
});
