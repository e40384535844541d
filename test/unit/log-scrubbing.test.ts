import { describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/logging/logger.ts';
import { logStep, RequestTrace } from '../../lib/logging/request-trace.ts';
import { REDACTED, TOO_DEEP, scrubSecrets } from '../../lib/logging/scrub-secrets.ts';

// Synthetic values only: none of these is a real key or card.
const API_KEY = 'sk_test_synthetic_0001';
const RAW_KEY = 'idem-synthetic-0001';

function capturingLogger(): {
  log: ReturnType<typeof createLogger>;
  lines: string[];
} {
  const lines: string[] = [];
  const log = createLogger({
    level: 'info',
    destination: { write: (line: string) => void lines.push(line) },
  });
  return { log, lines };
}

describe('log lines', () => {
  it('censor every secret field, at the top and nested in objects and arrays', () => {
    const { log, lines } = capturingLogger();
    log.info(
      {
        apiKey: API_KEY,
        Authorization: `Bearer ${API_KEY}`,
        input: { idempotencyKey: RAW_KEY, paymentMethod: 'pm_card_visa', amount: '10.00' },
        req: { headers: { authorization: `Bearer ${API_KEY}`, host: '127.0.0.1' } },
        endpoints: [{ url: 'http://127.0.0.1:9/hook', secret: 'whsec_synthetic' }],
      },
      'a whole request logged by mistake',
    );
    expect(lines).toHaveLength(1);
    const line = lines[0]!;
    for (const secret of [API_KEY, RAW_KEY, 'pm_card_visa', 'whsec_synthetic']) {
      expect(line).not.toContain(secret);
    }
    const parsed = JSON.parse(line) as Record<string, unknown>;
    expect(parsed).toMatchObject({
      apiKey: REDACTED,
      Authorization: REDACTED,
      input: { idempotencyKey: REDACTED, paymentMethod: REDACTED, amount: '10.00' },
      req: { headers: { authorization: REDACTED, host: '127.0.0.1' } },
      endpoints: [{ url: 'http://127.0.0.1:9/hook', secret: REDACTED }],
      msg: 'a whole request logged by mistake',
    });
  });

  it('keep what is not secret, with the request context', () => {
    const { log, lines } = capturingLogger();
    const trace = RequestTrace.start(log, 'req-1');
    trace.annotate({ tenantId: 't1', keyRef: 'ab12' });
    trace.log.info({ status: 200, durationMs: 3, at: new Date(0) }, 'request');
    log.info({ n: 1 }, 'outside a request');
    expect(JSON.parse(lines[0]!)).toMatchObject({
      requestId: 'req-1',
      tenantId: 't1',
      keyRef: 'ab12',
      status: 200,
      durationMs: 3,
      at: '1970-01-01T00:00:00.000Z',
    });
    expect(JSON.parse(lines[1]!)).toMatchObject({ n: 1, msg: 'outside a request' });
    expect(JSON.parse(lines[1]!)).not.toHaveProperty('requestId');
  });

  it('carry only their own request, however two requests interleave', () => {
    const { log, lines } = capturingLogger();
    const first = RequestTrace.start(log, 'req-a');
    const second = RequestTrace.start(log, 'req-b');
    first.log.info('a before');
    second.annotate({ tenantId: 't2', operation: 'createPayment' });
    first.annotate({ tenantId: 't1' });
    second.log.info({ tenantId: 'from the line' }, 'b after');
    first.log.info('a after');
    const [aBefore, bAfter, aAfter] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(aBefore).toMatchObject({ requestId: 'req-a', msg: 'a before' });
    expect(aBefore).not.toHaveProperty('tenantId');
    // A line's own field wins over the request's.
    expect(bAfter).toMatchObject({ requestId: 'req-b', tenantId: 'from the line' });
    expect(bAfter).toMatchObject({ operation: 'createPayment' });
    expect(aAfter).toMatchObject({ requestId: 'req-a', tenantId: 't1' });
    expect(aAfter).not.toHaveProperty('operation');
  });

  it('replace a malformed request id with one of their own', () => {
    const { log } = capturingLogger();
    expect(RequestTrace.start(log, 'ok.id-1:2').requestId).toBe('ok.id-1:2');
    expect(RequestTrace.start(log, 'not valid').requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(RequestTrace.start(log, undefined).requestId).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('a step of some work', () => {
  const step = { msg: 'provider call', call: 'createPayment', outcome: 'approved' } as const;

  it('is written at info when the work has no request, which has no summary line', () => {
    const { log, lines } = capturingLogger();
    logStep({ log, trace: null }, step);
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([
      expect.objectContaining({ level: 30, msg: 'provider call', outcome: 'approved' }),
    ]);
  });

  it("is kept for the request's summary, and written at debug only", () => {
    const lines: string[] = [];
    const log = createLogger({
      level: 'debug',
      destination: { write: (line: string) => void lines.push(line) },
    });
    const trace = RequestTrace.start(log, 'req-step');
    const where = { log: trace.log, trace };
    logStep(where, step);
    logStep(where, { msg: 'admission', outcome: 'executed' });
    logStep(where, { msg: 'phase committed', recoveryPoint: 'finished', fencingToken: '1' });
    expect(trace.summary()).toEqual({
      admissions: [{ outcome: 'executed' }],
      phases: ['finished'],
      providerCalls: ['approved'],
    });
    trace.annotate({ operation: 'refundPayment', keyRef: 'aaaaaaaaaaaa' });
    logStep(where, { msg: 'admission', outcome: 'replayed' });
    logStep(where, { msg: 'admission', operation: 'capturePayment', outcome: 'invalid_key' });
    expect(trace.summary().admissions).toEqual([
      { outcome: 'executed' },
      { operation: 'refundPayment', keyRef: 'aaaaaaaaaaaa', outcome: 'replayed' },
      // Refused before it had a scope: the key reference of another command is not its own.
      { operation: 'capturePayment', outcome: 'invalid_key' },
    ]);
    const written = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(written.slice(0, 3).map((l) => [l['level'], l['msg'], l['requestId']])).toEqual([
      [20, 'provider call', 'req-step'],
      [20, 'admission', 'req-step'],
      [20, 'phase committed', 'req-step'],
    ]);
  });
});

describe('scrubSecrets', () => {
  it('changes nothing the caller passed in', () => {
    const headers = { authorization: `Bearer ${API_KEY}` };
    const fields = { req: { headers }, list: [{ secret: 's' }] };
    const scrubbed = scrubSecrets(fields);
    expect(headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(fields.list[0]!.secret).toBe('s');
    expect(scrubbed).not.toBe(fields);
  });

  it('returns a line with nothing to censor as itself', () => {
    const fields = { method: 'POST', status: 200, nested: { a: [1, 2, { b: 'c' }] } };
    expect(scrubSecrets(fields)).toBe(fields);
  });

  it('replaces nesting too deep to walk, so a cycle cannot hang it or slip a secret through', () => {
    const cyclic: Record<string, unknown> = { secret: 's' };
    cyclic.self = cyclic;
    const scrubbed = scrubSecrets({ cyclic });
    expect(JSON.stringify(scrubbed)).not.toContain('"s"');
    expect(JSON.stringify(scrubbed)).toContain(TOO_DEEP);
  });
});
