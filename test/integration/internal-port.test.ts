import { createTRPCClient, httpLink } from '@trpc/client';
import { describe, expect, it } from 'vitest';
import type { AppRouter } from '../../services/router.ts';
import { startApp } from '../../app/app.ts';
import { graphql } from '../support/graphql-client.ts';
import { useTestDatabase } from '../support/test-database.ts';
import {
  INTERNAL_TOKEN,
  startTestStack,
  TENANT_A,
  testKeyring,
  type TestStack,
  useTestStackOn,
} from '../support/test-stack.ts';
import { waitUntil } from '../support/wait-until.ts';

/**
 * docs/api.md §1.2 INTERNAL_PORT: /trpc and /metrics only on the internal server, 404 on the public
 * one; health on both. Unset, everything stays on the one port.
 */
const database = useTestDatabase('internal_port');
const separate = useTestStackOn(database, { app: { internalPort: 0 } });
const single = useTestStackOn(database);

const withToken = { authorization: `Bearer ${INTERNAL_TOKEN}`, 'content-type': 'application/json' };

function servicesAt(url: string) {
  return createTRPCClient<AppRouter>({
    links: [
      httpLink({ url: `${url}/trpc`, headers: { authorization: `Bearer ${INTERNAL_TOKEN}` } }),
    ],
  });
}

async function get(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
  return { status: response.status, text: await response.text() };
}

describe('with INTERNAL_PORT', () => {
  it('listens on a second address', () => {
    expect(separate.app.internalUrl).not.toBe(separate.app.url);
    expect(new URL(separate.app.internalUrl).hostname).toBe('127.0.0.1');
  });

  it('answers 404 for /trpc and /metrics on the public port, token or not', async () => {
    for (const path of ['/trpc', '/trpc/payments.get', '/trpc/system.ready', '/metrics']) {
      for (const headers of [{}, withToken]) {
        const answer = await get(`${separate.app.url}${path}`, headers);
        expect(answer, path).toEqual({ status: 404, text: '{"error":"not found"}' });
      }
    }
    const post = await fetch(`${separate.app.url}/trpc/payments.create`, {
      method: 'POST',
      headers: withToken,
      body: '{}',
    });
    expect(post.status).toBe(404);
  });

  it('serves tRPC (behind the internal token) and metrics on the internal port', async () => {
    const metrics = await get(`${separate.app.internalUrl}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('idempotency_requests_total');
    const anonymous = await fetch(`${separate.app.internalUrl}/trpc/payments.get`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(anonymous.status).toBe(401);
    expect(
      await servicesAt(separate.app.internalUrl).payments.get.query({
        tenantId: separate.tenantIds.a,
        id: 'pay_none',
      }),
    ).toBeNull();
  });

  it('keeps GraphQL on the public port only, and health on both', async () => {
    const query = '{ balances { currency } }';
    expect((await graphql(separate.app.url, { apiKey: TENANT_A.apiKey, query })).status).toBe(200);
    const internalGraphql = await fetch(`${separate.app.internalUrl}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TENANT_A.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    });
    expect(internalGraphql.status).toBe(404);
    for (const base of [separate.app.url, separate.app.internalUrl]) {
      expect((await get(`${base}/healthz`)).status).toBe(200);
      expect(await get(`${base}/readyz`)).toEqual({ status: 200, text: '{"status":"ready"}' });
    }
  });
});

describe('without INTERNAL_PORT', () => {
  it('serves everything on the one port, as before', async () => {
    expect(single.app.internalUrl).toBe(single.app.url);
    expect((await get(`${single.app.url}/metrics`)).status).toBe(200);
    expect(
      await servicesAt(single.app.url).payments.get.query({
        tenantId: single.tenantIds.a,
        id: 'pay_none',
      }),
    ).toBeNull();
    const query = '{ balances { currency } }';
    expect((await graphql(single.app.url, { apiKey: TENANT_A.apiKey, query })).status).toBe(200);
  });
});

/** Connections of gateways' service pools to this test's database. */
async function servicePoolConnections(stack: TestStack): Promise<number> {
  const { rows } = await stack.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = 'payments-services'`,
  );
  return rows[0]?.n ?? 0;
}

describe('start', () => {
  it('fails on an internal port in use, leaving nothing open behind', async () => {
    const before = await servicePoolConnections(separate);
    const failed = startApp({
      databaseUrl: database.url,
      pspUrl: separate.sandbox.url,
      internalToken: INTERNAL_TOKEN,
      keyring: testKeyring(),
      internalPort: Number(new URL(separate.app.internalUrl).port),
      leaseMs: 5_000,
      ttlSeconds: 86_400,
      recoveryIntervalMs: 60_000,
      providerTimeoutMs: 2_000,
      startRecoveryWorker: false,
      logLevel: 'silent',
    });
    await expect(failed).rejects.toMatchObject({ code: 'EADDRINUSE' });
    // The failed start's pool is closed: its connections leave (bounded wait).
    await waitUntil(async () => (await servicePoolConnections(separate)) <= before, {
      timeoutMs: 5_000,
      intervalMs: 100,
      what: 'the failed start’s pool connections to leave',
    });
    expect(await servicePoolConnections(separate)).toBeLessThanOrEqual(before);
  });
});

describe('stop', () => {
  it('drains and closes both servers', async () => {
    const stack = await startTestStack({ databaseUrl: database.url, app: { internalPort: 0 } });
    const { url, internalUrl } = stack.app;
    expect((await get(`${internalUrl}/healthz`)).status).toBe(200);
    await stack.stop();
    for (const base of [url, internalUrl]) {
      await expect(get(`${base}/healthz`)).rejects.toThrow();
    }
  });
});
