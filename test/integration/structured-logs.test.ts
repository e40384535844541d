import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { createHttpProviderAdapter } from '../../services/provider/http-provider-adapter.ts';
import { graphql, paymentOf } from '../support/graphql-client.ts';
import { CREATE_PAYMENT } from '../support/operations.ts';
import { useTestDatabase } from '../support/test-database.ts';
import {
  paymentInput,
  startTestStack,
  TENANT_A,
  testKeyring,
  useTestStackOn,
} from '../support/test-stack.ts';
import { untilCharging } from '../support/until-charging.ts';
import { waitUntil } from '../support/wait-until.ts';

/** pino's numeric levels. */
const INFO = 30;
const DEBUG = 20;
const lines: Array<Record<string, unknown>> = [];
const raw: string[] = [];
const database = useTestDatabase('structured-logs');
const keyring = testKeyring();
const stack = useTestStackOn(database, {
  app: {
    keyring,
    // Debug, so the steps' own lines are written too; info lines are told apart by level.
    logLevel: 'debug',
    logDestination: {
      write(line: string) {
        raw.push(line);
        lines.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  },
});

function send(input: Record<string, unknown>, requestId?: string) {
  return graphql(stack.app.url, {
    apiKey: TENANT_A.apiKey,
    query: CREATE_PAYMENT,
    variables: { input },
    requestId,
  });
}

describe('structured logs', () => {
  it('carry one request id from the gateway through admission and phases to the provider call', async () => {
    const answer = await send(paymentInput('log-raw-key-123456'), 'req-log-1');
    expect(answer.headers.get('x-request-id')).toBe('req-log-1');
    paymentOf(answer);
    const mine = lines.filter((line) => line['requestId'] === 'req-log-1');
    const steps = mine.filter((line) => line['level'] === DEBUG);
    expect(steps.map((line) => line['msg'])).toEqual(
      expect.arrayContaining(['admission', 'phase committed', 'provider call']),
    );
    const admission = steps.find((line) => line['msg'] === 'admission');
    expect(admission).toMatchObject({
      tenantId: stack.tenantIds.a,
      operation: 'createPayment',
      outcome: 'executed',
    });
    expect(admission?.['keyRef']).toMatch(/^[0-9a-f]{12}$/);
    const phases = steps.filter((line) => line['msg'] === 'phase committed');
    expect(phases.map((line) => line['recoveryPoint'])).toEqual([
      'provider_charge_sent',
      'finished',
    ]);
    expect(steps.find((line) => line['msg'] === 'provider call')).toMatchObject({
      outcome: 'approved',
      tenantId: stack.tenantIds.a,
    });
  });

  it('sum a request up in one line at info, with every step it took', async () => {
    paymentOf(await send(paymentInput('log-summary'), 'req-log-summary'));
    const info = lines.filter(
      (line) => line['requestId'] === 'req-log-summary' && line['level'] === INFO,
    );
    expect(info).toHaveLength(1);
    expect(info[0]).toMatchObject({
      msg: 'request',
      path: '/graphql',
      status: 200,
      tenantId: stack.tenantIds.a,
      operation: 'createPayment',
      admissions: [
        { operation: 'createPayment', keyRef: info[0]?.['keyRef'], outcome: 'executed' },
      ],
      phases: ['provider_charge_sent', 'finished'],
      providerCalls: ['approved'],
    });
    expect(info[0]?.['keyRef']).toMatch(/^[0-9a-f]{12}$/);
    paymentOf(await send(paymentInput('log-summary'), 'req-log-summary-replay'));
    const replay = lines.filter(
      (line) => line['requestId'] === 'req-log-summary-replay' && line['level'] === INFO,
    );
    expect(replay).toEqual([
      expect.objectContaining({
        msg: 'request',
        admissions: [expect.objectContaining({ outcome: 'replayed' })],
        phases: [],
        providerCalls: [],
      }),
    ]);
  });

  it('never hold a raw idempotency key, API key or card token', async () => {
    await send(paymentInput('log-raw-key-123456'), 'req-log-2'); // a replay
    await send({ ...paymentInput('log-raw-key-123456'), amount: '1.00' }, 'req-log-3'); // reused
    await send(paymentInput('bad key!'), 'req-log-4'); // invalid
    const text = raw.join('');
    for (const secret of ['log-raw-key-123456', TENANT_A.apiKey, 'pm_card_visa', 'bad key!']) {
      expect(text).not.toContain(secret);
    }
    // The key is still traceable: all its lines share one keyRef.
    const refs = new Set(
      lines
        .filter((l) => ['req-log-1', 'req-log-2', 'req-log-3'].includes(String(l['requestId'])))
        .map((l) => l['keyRef'])
        .filter((ref) => ref !== undefined),
    );
    expect(refs.size).toBe(1);
  });

  it('name a retry of a key this process met by the same keyRef, without another HMAC', async () => {
    const subkeys = vi.spyOn(keyring, 'subkey');
    const keyRefsMade = () =>
      subkeys.mock.calls.filter(([purpose]) => purpose === 'key-ref').length;
    try {
      paymentOf(await send(paymentInput('log-key-ref-memo'), 'req-memo-1'));
      expect(keyRefsMade()).toBe(1);
      paymentOf(await send(paymentInput('log-key-ref-memo'), 'req-memo-2'));
      expect(keyRefsMade()).toBe(1);
    } finally {
      subkeys.mockRestore();
    }
    const refOf = (requestId: string) =>
      lines.find((l) => l['requestId'] === requestId && l['msg'] === 'request')?.['keyRef'];
    expect(refOf('req-memo-1')).toMatch(/^[0-9a-f]{12}$/);
    expect(refOf('req-memo-2')).toBe(refOf('req-memo-1'));
  });

  it("carry the client's Idempotency-Attempt in the request line, when it is a small count", async () => {
    const sendAttempt = (key: string, requestId: string, attempt: string) =>
      graphql(stack.app.url, {
        apiKey: TENANT_A.apiKey,
        query: CREATE_PAYMENT,
        variables: { input: paymentInput(key) },
        requestId,
        headers: { 'idempotency-attempt': attempt },
      });
    paymentOf(await sendAttempt('log-attempt', 'req-log-attempt-1', '1'));
    paymentOf(await sendAttempt('log-attempt', 'req-log-attempt-3', '3'));
    paymentOf(await sendAttempt('log-attempt', 'req-log-attempt-bad', '3; drop table'));
    paymentOf(await sendAttempt('log-attempt', 'req-log-attempt-big', '123456'));
    const requestLine = (requestId: string) =>
      lines.find((line) => line['requestId'] === requestId && line['msg'] === 'request');
    expect(requestLine('req-log-attempt-1')).toMatchObject({ idempotencyAttempt: 1 });
    expect(requestLine('req-log-attempt-3')).toMatchObject({
      idempotencyAttempt: 3,
      admissions: [expect.objectContaining({ outcome: 'replayed' })],
    });
    for (const ignored of ['req-log-attempt-bad', 'req-log-attempt-big']) {
      expect(requestLine(ignored)).toBeDefined();
      expect(requestLine(ignored)).not.toHaveProperty('idempotencyAttempt');
    }
    expect(raw.join('')).not.toContain('drop table');
  });

  it('replace a malformed request id with one of their own', async () => {
    const answer = await send(paymentInput('log-id-2'), 'not a valid id');
    const id = answer.headers.get('x-request-id');
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(lines.some((line) => line['requestId'] === id && line['msg'] === 'admission')).toBe(
      true,
    );
  });

  it('name a recovery worker resumption as its own request, with the same key reference', async () => {
    stack.app.faults.arm('createPayment.provider_charge.before-call', { kind: 'throw' });
    await send(paymentInput('log-resumed'), 'req-log-5');
    stack.app.faults.disarm('createPayment.provider_charge.before-call');
    await stack.db.query(
      `UPDATE idempotency_keys SET lease_expires_at = now() - interval '1 second',
              next_attempt_at = NULL WHERE key = 'log-resumed'`,
    );
    await stack.app.services.worker.sweepOnce();
    const first = lines.find((l) => l['requestId'] === 'req-log-5' && l['msg'] === 'admission');
    const resumed = lines.filter(
      (l) => String(l['requestId']).startsWith('worker-') && l['keyRef'] === first?.['keyRef'],
    );
    expect(resumed.map((l) => l['msg'])).toEqual(
      expect.arrayContaining(['resuming a stale request', 'provider call', 'phase committed']),
    );
    expect(resumed.filter((l) => l['level'] === INFO)).toEqual([
      expect.objectContaining({ msg: 'resuming a stale request' }),
      expect.objectContaining({
        msg: 'stale request resumed',
        result: 'finished',
        phases: ['finished'],
        // A resumption asks the provider before it charges again.
        providerCalls: ['probe_missing', 'approved'],
      }),
    ]);
  });

  it('name each command of a document in its summary, with its own key reference', async () => {
    const answer = await graphql(stack.app.url, {
      apiKey: TENANT_A.apiKey,
      query: `mutation Two($a: CreatePaymentInput!, $b: CreatePaymentInput!) {
        a: createPayment(input: $a) { payment { id } }
        b: createPayment(input: $b) { payment { id } }
      }`,
      variables: { a: paymentInput('log-two-a'), b: paymentInput('log-two-b') },
      requestId: 'req-log-two',
    });
    expect(answer.body.errors).toBeUndefined();
    const info = lines.filter((l) => l['requestId'] === 'req-log-two' && l['level'] === INFO);
    expect(info).toHaveLength(1);
    const admissions = info[0]?.['admissions'] as Array<Record<string, unknown>>;
    expect(admissions.map((a) => a['outcome'])).toEqual(['executed', 'executed']);
    const refs = admissions.map((a) => a['keyRef']);
    expect(refs[0]).toMatch(/^[0-9a-f]{12}$/);
    expect(refs[1]).toMatch(/^[0-9a-f]{12}$/);
    expect(refs[0]).not.toBe(refs[1]);
    expect(info[0]?.['phases']).toEqual([
      'provider_charge_sent',
      'finished',
      'provider_charge_sent',
      'finished',
    ]);
  });

  it("sum up an operator's re-drive in a line of its own, with the key's reference", async () => {
    stack.app.faults.arm('createPayment.provider_charge.before-call', { kind: 'throw' });
    await send(paymentInput('log-redriven'), 'req-log-redriven');
    stack.app.faults.disarm('createPayment.provider_charge.before-call');
    await stack.db.query(
      `UPDATE idempotency_keys SET lease_expires_at = now() - interval '1 second'
        WHERE key = 'log-redriven'`,
    );
    await stack.app.services.client.ops.redrive.mutate({
      tenantId: stack.tenantIds.a,
      operation: 'payments.create.v1',
      key: 'log-redriven',
      actor: 'alice',
      reason: 'a test of the re-drive line',
    });
    const first = lines.find(
      (l) => l['requestId'] === 'req-log-redriven' && l['msg'] === 'admission',
    );
    const line = lines.find((l) => l['msg'] === 'request re-driven');
    expect(line).toMatchObject({
      level: INFO,
      actor: 'alice',
      result: 'resumed',
      tenantId: stack.tenantIds.a,
      keyRef: first?.['keyRef'],
      phases: ['finished'],
      providerCalls: ['probe_missing', 'approved'],
    });
    expect(line?.['requestId']).not.toBe('req-log-redriven');
  });

  it('sum up a request whose client gave up, once its work is done', async () => {
    // pm_card_slow answers after 500 ms here; the client gives up once the charge is at the
    // provider, so the request was admitted first however slowly the machine runs.
    const giveUp = new AbortController();
    const answer = graphql(stack.app.url, {
      apiKey: TENANT_A.apiKey,
      query: CREATE_PAYMENT,
      variables: { input: paymentInput('log-gave-up', { paymentMethod: 'pm_card_slow' }) },
      requestId: 'req-log-gave-up',
      signal: giveUp.signal,
    });
    await untilCharging(stack.sandbox, 'log-gave-up');
    giveUp.abort();
    await expect(answer).rejects.toThrow();
    const info = await waitUntil(
      () => {
        const found = lines.filter(
          (line) => line['requestId'] === 'req-log-gave-up' && line['level'] === INFO,
        );
        return found.length > 0 && found;
      },
      { timeoutMs: 10_000, what: 'the request line of the request whose client gave up' },
    );
    expect(info).toEqual([
      expect.objectContaining({
        msg: 'request',
        aborted: true,
        phases: ['provider_charge_sent', 'finished'],
        providerCalls: ['approved'],
      }),
    ]);
  });

  it("write a failed resumption's error under the resumption's own request", async () => {
    const fault = 'createPayment.provider_charge.before-call';
    stack.app.faults.arm(fault, { kind: 'throw' });
    try {
      await send(paymentInput('log-resume-fails'), 'req-log-6');
      await stack.db.query(
        `UPDATE idempotency_keys SET lease_expires_at = now() - interval '1 second',
                next_attempt_at = NULL WHERE key = 'log-resume-fails'`,
      );
      await stack.app.services.worker.sweepOnce();
    } finally {
      stack.app.faults.disarm(fault);
    }
    const first = lines.find((l) => l['requestId'] === 'req-log-6' && l['msg'] === 'admission');
    const resumed = lines.filter(
      (l) => String(l['requestId']).startsWith('worker-') && l['keyRef'] === first?.['keyRef'],
    );
    expect(resumed.filter((l) => Number(l['level']) >= INFO).map((l) => l['msg'])).toEqual([
      'resuming a stale request',
      'unexpected error',
      'stale request resumed',
    ]);
    expect(resumed.find((l) => l['msg'] === 'stale request resumed')).toMatchObject({
      result: 'error',
    });
  });
});

describe('a payment through the gateway', () => {
  it("sends the merchant's request id to the provider with the charge", async () => {
    // A recording proxy in front of the sandbox, as the second gateway's provider.
    const seen: Array<{ method?: string; url?: string; requestId?: string | string[] }> = [];
    const proxyErrors: unknown[] = [];
    const proxy = createServer((req, res) => {
      seen.push({ method: req.method, url: req.url, requestId: req.headers['x-request-id'] });
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const headers = Object.fromEntries(
          Object.entries(req.headers).filter(
            (entry): entry is [string, string] =>
              typeof entry[1] === 'string' &&
              !['host', 'connection', 'content-length'].includes(entry[0]),
          ),
        );
        fetch(`${stack.sandbox.url}${req.url ?? '/'}`, {
          method: req.method,
          headers,
          body: req.method === 'POST' ? Buffer.concat(chunks) : undefined,
        })
          .then(async (answer) => {
            res.writeHead(answer.status, { 'content-type': 'application/json' });
            res.end(await answer.text());
          })
          .catch((error: unknown) => {
            proxyErrors.push(error);
            res.destroy();
          });
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const { port } = proxy.address() as AddressInfo;
    const proxied = await startTestStack({
      databaseUrl: database.url,
      app: { pspUrl: `http://127.0.0.1:${port}` },
    });
    try {
      const answer = await graphql(proxied.app.url, {
        apiKey: TENANT_A.apiKey,
        query: CREATE_PAYMENT,
        variables: { input: paymentInput('log-psp-request-id') },
        requestId: 'req-log-psp',
      });
      expect(proxyErrors).toEqual([]);
      paymentOf(answer);
      expect(seen.filter((call) => call.method === 'POST')).toEqual([
        { method: 'POST', url: '/v1/charges', requestId: 'req-log-psp' },
      ]);
    } finally {
      await proxied.stop();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });
});

describe('the provider adapter', () => {
  it('sends the request id to the provider with every call', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const psp = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => psp.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = psp.address() as AddressInfo;
      const adapter = createHttpProviderAdapter(`http://127.0.0.1:${port}`);
      await adapter.probeCharge({
        idempotencyKey: 'pay_x',
        reference: 'ref_x',
        timeoutMs: 1_000,
        requestId: 'req-psp-1',
      });
      expect(seen[0]?.['x-request-id']).toBe('req-psp-1');
    } finally {
      await new Promise((resolve) => psp.close(resolve));
    }
  });
});
