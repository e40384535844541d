// The sandbox payment provider's contract, over real HTTP. The statement: the books a
// reconciliation reads, and when an arrival instant is complete.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Charge, SandboxPsp } from '../../../sandbox-psp/sandbox-server.ts';
import { startSandboxPsp } from '../../../sandbox-psp/sandbox-server.ts';
import type { Answer, ChargeBody } from '../support/sandbox-psp-contract.ts';
import {
  BOOKS_SLOW_MS,
  DISTINCT_MS_GAP_MS,
  LONG_BLACKHOLE_MS,
  STATEMENT_LAG_MS,
  chargeBody,
  chargeOf,
  completeUntilMs,
  errorCodeOf,
  getStatement,
  giveUp,
  newKey,
  pause,
  postCharge,
  statementData,
  toAnswer,
  useSandboxPsp,
} from '../support/sandbox-psp-contract.ts';

useSandboxPsp();

describe('statement', () => {
  let books: SandboxPsp;

  beforeAll(async () => {
    books = await startSandboxPsp({
      slowMs: BOOKS_SLOW_MS,
      blackholeMs: LONG_BLACKHOLE_MS,
      statementLagMs: STATEMENT_LAG_MS,
    });
  });

  afterAll(async () => {
    await books.close();
  });

  const post = (body: ChargeBody, signal?: AbortSignal): Promise<Answer> =>
    postCharge({ baseUrl: books.url, key: newKey(), body, signal });
  const statementOf = (range: { from: string; to: string }, signal?: AbortSignal) =>
    getStatement({ ...range, baseUrl: books.url, signal });

  it('lists every applied charge created in [from, to), oldest first, blackholed ones included', async () => {
    const before = chargeOf(await post(chargeBody()));
    await pause(DISTINCT_MS_GAP_MS);
    const visa = chargeOf(await post(chargeBody()));
    const unavailable = await post(chargeBody({ paymentMethod: 'pm_card_unavailable' }));
    expect(unavailable.status).toBe(503);
    const timeoutBody = chargeBody({ paymentMethod: 'pm_card_timeout' });
    await expect(post(timeoutBody, giveUp())).rejects.toThrow();
    const unreachableBody = chargeBody({ paymentMethod: 'pm_card_unreachable' });
    await expect(post(unreachableBody, giveUp())).rejects.toThrow();
    const invalid = await post({ ...chargeBody(), amount: '0' });
    expect(invalid.status).toBe(400);
    const declined = chargeOf(await post(chargeBody({ paymentMethod: 'pm_card_declined' })));
    const unknownBody = chargeBody({ paymentMethod: 'pm_card_unknown' });
    const unknownKey = newKey();
    const unknownCall = { baseUrl: books.url, key: unknownKey, body: unknownBody };
    await expect(postCharge({ ...unknownCall, signal: giveUp() })).rejects.toThrow();
    const [unknown] = books.charges({ reference: unknownBody.reference });
    expect(unknown).toMatchObject({ idempotencyKey: unknownKey, status: 'captured' });
    await pause(DISTINCT_MS_GAP_MS);
    const after = chargeOf(await post(chargeBody()));

    // from is inclusive and to exclusive: cut exactly on the first and last charges' instants.
    const statement = await statementOf({ from: visa.createdAt, to: after.createdAt }, giveUp());
    expect(statement.status).toBe(200);
    expect(statementData(statement)).toEqual([visa, declined, unknown]);
    expect(before.createdAt < visa.createdAt).toBe(true);
    // The statement did not wait for the blackhole, which still hides the charge from the API.
    const probe = fetch(`${books.url}/v1/charges/by-idempotency-key/${unknownKey}`, {
      signal: giveUp(),
    });
    await expect(probe).rejects.toThrow();
    const whole = await statementOf({
      from: before.createdAt,
      to: new Date(Date.now() + 1).toISOString(),
    });
    expect(statementData(whole)).toEqual([before, visa, declined, unknown, after]);
  });

  it('answers an empty statement for an empty range or a period without charges', async () => {
    const charge = chargeOf(await post(chargeBody()));
    const empty = await statementOf({ from: charge.createdAt, to: charge.createdAt });
    expect(empty.json['data']).toEqual([]);
    const past = await statementOf({ from: '2000-01-01T00:00:00Z', to: '2000-01-02T00:00:00Z' });
    expect(past.status).toBe(200);
    expect(past.json['data']).toEqual([]);
  });

  it('reports completeUntil as now minus statementLagMs', async () => {
    const beforeMs = Date.now();
    const statement = await statementOf({
      from: '2000-01-01T00:00:00Z',
      to: '2000-01-02T00:00:00Z',
    });
    const afterMs = Date.now();
    expect(statement.json['completeUntil']).toMatch(
      /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/,
    );
    expect(completeUntilMs(statement)).toBeGreaterThanOrEqual(beforeMs - STATEMENT_LAG_MS);
    expect(completeUntilMs(statement)).toBeLessThanOrEqual(afterMs - STATEMENT_LAG_MS);
  });

  it('defaults statementLagMs to one second', async () => {
    const local = await startSandboxPsp();
    try {
      const beforeMs = Date.now();
      const statement = await getStatement({
        baseUrl: local.url,
        from: '2000-01-01T00:00:00Z',
        to: '2000-01-02T00:00:00Z',
      });
      const afterMs = Date.now();
      expect(completeUntilMs(statement)).toBeGreaterThanOrEqual(beforeMs - 1_000);
      expect(completeUntilMs(statement)).toBeLessThanOrEqual(afterMs - 1_000);
    } finally {
      await local.close();
    }
  });

  it('never stamps a charge still in flight inside a period it already called complete', async () => {
    const body = chargeBody({ paymentMethod: 'pm_card_slow' });
    const startedAt = new Date();
    const slow = post(body);
    // Cut a statement after the slow request arrived (and more than the lag ago) but before it
    // is recorded: its arrival instant is then already inside the complete period.
    await pause(BOOKS_SLOW_MS / 2);
    const range = {
      from: startedAt.toISOString(),
      to: new Date(Date.now() + BOOKS_SLOW_MS * 10).toISOString(),
    };
    const early = await statementOf(range);
    expect(completeUntilMs(early)).toBeGreaterThan(startedAt.getTime());
    const charge = chargeOf(await slow);
    const late = await statementOf(range);
    expect(statementData(late)).toContainEqual(charge);
    // The claim "complete until" holds: later books add nothing before that instant.
    const final = (answer: Answer): Charge[] =>
      statementData(answer).filter((c) => Date.parse(c.createdAt) < completeUntilMs(early));
    expect(final(late)).toEqual(final(early));
  });

  const badRanges: [string, Record<string, string>][] = [
    ['from missing', { to: '2024-01-02T00:00:00Z' }],
    ['to missing', { from: '2024-01-01T00:00:00Z' }],
    ['both missing', {}],
    ['from empty', { from: '', to: '2024-01-02T00:00:00Z' }],
    ['from not a date', { from: 'yesterday', to: '2024-01-02T00:00:00Z' }],
    ['from not ISO', { from: 'Mon, 01 Jan 2024 00:00:00 GMT', to: '2024-01-02T00:00:00Z' }],
    ['from without zone', { from: '2024-01-01T00:00:00', to: '2024-01-02T00:00:00Z' }],
    ['from a date only', { from: '2024-01-01', to: '2024-01-02T00:00:00Z' }],
    ['to an impossible day', { from: '2024-01-01T00:00:00Z', to: '2024-02-30T00:00:00Z' }],
    ['to an impossible month', { from: '2024-01-01T00:00:00Z', to: '2024-13-01T00:00:00Z' }],
    ['from after to', { from: '2024-01-02T00:00:00Z', to: '2024-01-01T00:00:00Z' }],
    [
      'from after to across zones',
      { from: '2024-01-01T00:30:00Z', to: '2024-01-01T01:00:00+01:00' },
    ],
  ];

  it.each(badRanges)('rejects %s with 400 INVALID_REQUEST', async (_, params) => {
    const query = new URLSearchParams(params).toString();
    const answer = await toAnswer(await fetch(`${books.url}/v1/statement?${query}`));
    expect(answer.status).toBe(400);
    expect(errorCodeOf(answer)).toBe('INVALID_REQUEST');
    expect(typeof (answer.json['error'] as { message?: unknown }).message).toBe('string');
  });

  it('accepts instants with an offset and without seconds', async () => {
    const answer = await statementOf({
      from: '2024-01-01T01:00+01:00',
      to: '2024-01-01T00:30:00.5Z',
    });
    expect(answer.status).toBe(200);
  });

  it('answers 405 to anything but GET', async () => {
    const answer = await toAnswer(await fetch(`${books.url}/v1/statement`, { method: 'POST' }));
    expect(answer.status).toBe(405);
    expect(answer.headers.get('allow')).toBe('GET');
  });
});
