import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { describe, expect, it } from 'vitest';
import type { AppRouter } from '../../services/router.ts';
import { INTERNAL_TOKEN, useTestStack } from '../support/test-stack.ts';

const stack = useTestStack('trpc');

function clientWith(token: string) {
  return createTRPCClient<AppRouter>({
    links: [
      httpLink({ url: `${stack.app.url}/trpc`, headers: { authorization: `Bearer ${token}` } }),
    ],
  });
}

describe('internal tRPC services over HTTP', () => {
  it('another service creates and reads a payment with a typed client, with the same idempotency', async () => {
    const services = clientWith(INTERNAL_TOKEN);
    const input = {
      tenantId: stack.tenantIds.a,
      idempotencyKey: 'svc-1',
      amount: '7.5',
      currency: 'eur',
      paymentMethod: 'pm_card_visa',
    };
    const created = await services.payments.create.mutate(input);
    if (!created.ok) throw new Error(created.error.code);
    expect(created.payment).toMatchObject({ status: 'SUCCEEDED', amount: '7.50', currency: 'EUR' });
    const again = await services.payments.create.mutate({
      ...input,
      amount: '7.50',
      currency: 'EUR',
    });
    expect(again).toMatchObject({
      ok: true,
      idempotency: { replayed: true },
      payment: { id: created.payment.id },
    });
    const reused = await services.payments.create.mutate({ ...input, amount: '8' });
    expect(reused).toMatchObject({ ok: false, error: { code: 'IDEMPOTENCY_KEY_REUSED' } });
    expect(
      await services.payments.get.query({ tenantId: stack.tenantIds.a, id: created.payment.id }),
    ).toEqual(created.payment);
    expect(
      await services.payments.get.query({ tenantId: stack.tenantIds.b, id: created.payment.id }),
    ).toBeNull();
  });

  it('answers 401 on every path without the internal token, before any routing', async () => {
    for (const path of [
      '/trpc',
      '/trpc/payments.get',
      '/trpc/no.such.procedure',
      '/trpc/payments.create?batch=1',
    ]) {
      for (const authorization of [undefined, 'Bearer wrong-token', `Basic ${INTERNAL_TOKEN}`]) {
        const response = await fetch(`${stack.app.url}${path}`, {
          method: 'POST',
          headers: authorization
            ? { authorization, 'content-type': 'application/json' }
            : { 'content-type': 'application/json' },
          body: '{}',
        });
        expect(response.status, `${path} with ${authorization}`).toBe(401);
      }
    }
    await expect(
      clientWith('wrong').payments.get.query({ tenantId: stack.tenantIds.a, id: 'x' }),
    ).rejects.toBeInstanceOf(TRPCClientError);
  });
});

describe('health and metrics', () => {
  it('/healthz, /readyz and /metrics answer; metrics carry the idempotency series', async () => {
    expect((await fetch(`${stack.app.url}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${stack.app.url}/readyz`)).json()).toEqual({ status: 'ready' });
    const text = await (await fetch(`${stack.app.url}/metrics`)).text();
    for (const name of [
      'idempotency_requests_total',
      'idempotency_replays_total',
      'idempotency_in_progress_age_max_seconds',
      'idempotency_stale_leases',
      'idempotency_unknown_outcomes',
      'provider_calls_total',
      'graphql_request_duration_seconds',
      'process_cpu_seconds_total',
    ]) {
      expect(text).toContain(name);
    }
  });

  it('/readyz is 503 when the newest migration has not run', async () => {
    await stack.db.query(`UPDATE mikro_orm_migrations SET name = name || '-hidden'`);
    try {
      expect((await fetch(`${stack.app.url}/readyz`)).status).toBe(503);
    } finally {
      await stack.db.query(`UPDATE mikro_orm_migrations SET name = replace(name, '-hidden', '')`);
    }
  });
});
