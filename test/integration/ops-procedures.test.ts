import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { describe, expect, it } from 'vitest';
import type { AppRouter } from '../../services/router.ts';
import { graphql, paymentOf } from '../support/graphql-client.ts';
import { CAPTURE_PAYMENT, CREATE_PAYMENT } from '../support/operations.ts';
import {
  createPaymentOn,
  INTERNAL_TOKEN,
  paymentInput,
  resolveByHandAsNotCharged,
  TENANT_A,
  useTestStack,
} from '../support/test-stack.ts';

const LEASE_MS = 1_000;
/** Past the lease: redrive takes over only an expired lease, so time must pass. */
const LEASE_EXPIRED_WAIT_MS = LEASE_MS + 100;
const stack = useTestStack('ops-procedures', { app: { leaseMs: LEASE_MS } });
/** A well-formed tenant id no tenant has. */
const UNKNOWN_TENANT_ID = '00000000-0000-4000-8000-00000000dead';

describe('ops procedures', () => {
  it('list a stuck request with its phases; a re-drive is refused while its owner holds the lease, then resumes it once', async () => {
    stack.app.faults.arm('createPayment.provider_charge.before-call', { kind: 'throw' });
    const input = paymentInput('ops-stuck', { amount: '8.00' });
    await createPaymentOn(stack, input);
    stack.app.faults.disarm('createPayment.provider_charge.before-call');
    const ops = stack.app.services.client.ops;

    const listed = await ops.listUnfinished.query({ states: ['started'], limit: 10 });
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({
      key: 'ops-stuck',
      state: 'started',
      recovery_point: 'provider_charge_sent',
    });
    expect(listed[0]?.['phases']).toEqual([
      expect.objectContaining({ recoveryPoint: 'provider_charge_sent', fencingToken: '1' }),
    ]);

    const target = {
      tenantId: stack.tenantIds.a,
      operation: 'payments.create.v1',
      key: 'ops-stuck',
      actor: 'alice',
      reason: 'owner crashed',
    };
    // The owner's lease, held by the database clock rather than by how fast this machine is:
    // live (an hour left), the re-drive is refused; run out, it resumes the request.
    await stack.db.query(
      `UPDATE idempotency_keys SET lease_expires_at = now() + interval '1 hour' WHERE key = 'ops-stuck'`,
    );
    await expect(ops.redrive.mutate(target)).rejects.toMatchObject({ data: { code: 'CONFLICT' } });
    await stack.db.query(
      `UPDATE idempotency_keys SET lease_expires_at = now() - interval '1 second' WHERE key = 'ops-stuck'`,
    );
    expect(await ops.redrive.mutate(target)).toEqual({ state: 'finished' });
    await expect(ops.redrive.mutate(target)).rejects.toMatchObject({ data: { code: 'CONFLICT' } });

    expect(stack.sandbox.charges({ reference: 'ops-stuck' })).toHaveLength(1);
    const { rows } = await stack.db.query(
      `SELECT action, decided_by, reason FROM idempotency_interventions WHERE key = 'ops-stuck'`,
    );
    expect(rows).toEqual([
      { action: 'redriven', decided_by: 'operator:alice', reason: 'owner crashed' },
    ]);
    const replay = await createPaymentOn(stack, input);
    expect(paymentOf(replay).status).toBe('SUCCEEDED');
    expect(await ops.listUnfinished.query({ states: ['started', 'unknown'], limit: 10 })).toEqual(
      [],
    );
  });

  it('re-drives a stuck capture too, through the same registry the worker uses', async () => {
    const created = await graphql(stack.app.url, {
      apiKey: TENANT_A.apiKey,
      query: CREATE_PAYMENT,
      variables: {
        input: {
          idempotencyKey: 'ops-auth',
          amount: '5.00',
          currency: 'EUR',
          paymentMethod: 'pm_card_visa',
          captureMethod: 'MANUAL',
        },
      },
    });
    const paymentId = paymentOf(created).id;
    stack.app.faults.arm('capturePayment.provider_call.before-call', { kind: 'throw' });
    await graphql(stack.app.url, {
      apiKey: TENANT_A.apiKey,
      query: CAPTURE_PAYMENT,
      variables: { input: { idempotencyKey: 'ops-cap', paymentId } },
    });
    stack.app.faults.disarm('capturePayment.provider_call.before-call');
    await new Promise((resolve) => setTimeout(resolve, LEASE_EXPIRED_WAIT_MS));
    const redriven = await stack.app.services.client.ops.redrive.mutate({
      tenantId: stack.tenantIds.a,
      operation: 'payments.capture.v1',
      key: 'ops-cap',
      actor: 'bob',
      reason: 'capture stuck after a crash',
    });
    expect(redriven).toEqual({ state: 'finished' });
    const { rows } = await stack.db.query('SELECT status FROM payments WHERE id = $1', [paymentId]);
    expect(rows).toEqual([{ status: 'SUCCEEDED' }]);
  });

  it('refuses to resolve by hand anything but an unknown outcome', async () => {
    const input = paymentInput('ops-done', { amount: '8.00' });
    await createPaymentOn(stack, input);
    await expect(resolveByHandAsNotCharged(stack, 'ops-done')).rejects.toMatchObject({
      data: { code: 'CONFLICT' },
    });
  });
});

describe('a tenant in an internal procedure, by name or id', () => {
  /** tRPC's own client over HTTP, as the ops CLI and a developer's script call the services. */
  const services = () =>
    createTRPCClient<AppRouter>({
      links: [
        httpLink({
          url: `${stack.app.url}/trpc`,
          headers: { authorization: `Bearer ${INTERNAL_TOKEN}` },
        }),
      ],
    });

  it('tenants.get finds a tenant by its name or its id, and answers null for neither', async () => {
    const tenant = { id: stack.tenantIds.a, name: TENANT_A.name };
    expect(await services().tenants.get.query({ tenant: TENANT_A.name })).toEqual(tenant);
    expect(await services().tenants.get.query({ tenant: stack.tenantIds.a })).toEqual(tenant);
    expect(await services().tenants.get.query({ tenant: 'nosuch' })).toBeNull();
    expect(await services().tenants.get.query({ tenant: UNKNOWN_TENANT_ID })).toBeNull();
  });

  it('every procedure taking one takes either form', async () => {
    for (const tenant of [TENANT_A.name, stack.tenantIds.a]) {
      expect(await services().ops.referenceGuard.query({ tenant })).toEqual({
        tenant: TENANT_A.name,
        enabled: false,
      });
      const keys = await services().tenants.listApiKeys.query({ tenant });
      expect(keys.map((key) => key.prefix)).toContain(TENANT_A.apiKey.slice(0, 12));
    }
  });

  it.each(['nosuch', UNKNOWN_TENANT_ID])(
    'an unknown one (%s) is NOT_FOUND (404), never an internal error reported with its stack',
    async (tenant) => {
      const reported = stack.errors.length;
      const calls = [
        () => services().tenants.listApiKeys.query({ tenant }),
        () => services().tenants.createApiKey.mutate({ tenant }),
        () => services().tenants.revokeApiKey.mutate({ tenant, id: UNKNOWN_TENANT_ID }),
        () => services().ops.referenceGuard.query({ tenant }),
        () => services().ops.setReferenceGuard.mutate({ tenant, enabled: true, actor: 'alice' }),
      ];
      for (const call of calls) {
        const error = await call().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(TRPCClientError);
        expect(error).toMatchObject({
          message: `no such tenant: ${tenant}`,
          data: { code: 'NOT_FOUND', httpStatus: 404 },
        });
      }
      expect(stack.errors.slice(reported)).toEqual([]);
    },
  );
});
