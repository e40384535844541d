// Contract of the sandbox payment provider: every token behaviour and every idempotency rule
// the gateway's exactly-once guarantee leans on, exercised over real HTTP.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Charge, Refund, SandboxPsp } from '../../sandbox-psp/sandbox-server.ts';
import { startSandboxPsp } from '../../sandbox-psp/sandbox-server.ts';

/** Short enough to keep the suite fast, long enough to overlap a duplicate request. */
const SLOW_MS = 300;
/** Short enough to wait out in a test, longer than CLIENT_GIVE_UP_MS so calls visibly hang. */
const BLACKHOLE_MS = 500;
/** How long a client waits before it treats a call as timed out. */
const CLIENT_GIVE_UP_MS = 100;
/** Slack for timer granularity when asserting "not before" a deadline. */
const TIMER_SLACK_MS = 25;
/** The books' settlement lag in the statement tests: neither 0 nor the 1 s default, so a
 * server that ignored the option would be caught, and far shorter than BOOKS_SLOW_MS so a
 * statement cut while a slow charge is in flight already calls its arrival instant complete. */
const STATEMENT_LAG_MS = 100;
/** pm_card_slow in the statement tests: a wide window between "arrival is final" (after
 * STATEMENT_LAG_MS) and "charge recorded", so the in-flight check keeps its teeth under load. */
const BOOKS_SLOW_MS = 1_000;
/** A blackhole that outlasts every statement test, so "during the blackhole" is never racy. */
const LONG_BLACKHOLE_MS = 60_000;
/** Pause between two charges so their createdAt differ by whole milliseconds. */
const DISTINCT_MS_GAP_MS = 5;

interface ChargeBody {
  amount: string;
  currency: string;
  paymentMethod: string;
  reference: string;
  capture: boolean;
}

interface Answer {
  status: number;
  headers: Headers;
  json: Record<string, unknown>;
}

let psp: SandboxPsp;

beforeAll(async () => {
  psp = await startSandboxPsp({ port: 0, slowMs: SLOW_MS, blackholeMs: BLACKHOLE_MS });
});

afterAll(async () => {
  await psp.close();
});

const newKey = (): string => `key-${randomUUID()}`;
const newReference = (): string => `order-${randomUUID()}`;

function chargeBody(overrides: Partial<ChargeBody> = {}): ChargeBody {
  return {
    amount: '10.50',
    currency: 'EUR',
    paymentMethod: 'pm_card_visa',
    reference: newReference(),
    capture: true,
    ...overrides,
  };
}

async function toAnswer(response: Response): Promise<Answer> {
  const json = (await response.json()) as Record<string, unknown>;
  return { status: response.status, headers: response.headers, json };
}

async function postCharge(request: {
  key?: string;
  body: unknown;
  signal?: AbortSignal;
  baseUrl?: string;
}): Promise<Answer> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (request.key !== undefined) headers['Idempotency-Key'] = request.key;
  const response = await fetch(`${request.baseUrl ?? psp.url}/v1/charges`, {
    method: 'POST',
    headers,
    body: typeof request.body === 'string' ? request.body : JSON.stringify(request.body),
    signal: request.signal,
  });
  return toAnswer(response);
}

async function get(path: string, signal?: AbortSignal): Promise<Answer> {
  return toAnswer(await fetch(`${psp.url}${path}`, { signal }));
}

const probeByKey = (key: string, signal?: AbortSignal): Promise<Answer> =>
  get(`/v1/charges/by-idempotency-key/${encodeURIComponent(key)}`, signal);

const listByReference = (reference: string, signal?: AbortSignal): Promise<Answer> =>
  get(`/v1/charges?reference=${encodeURIComponent(reference)}`, signal);

const chargeOf = (answer: Answer): Charge => answer.json['charge'] as Charge;
const errorCodeOf = (answer: Answer): unknown =>
  (answer.json['error'] as { code?: unknown } | undefined)?.code;
const giveUp = (): AbortSignal => AbortSignal.timeout(CLIENT_GIVE_UP_MS);
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function getStatement(request: {
  from: string;
  to: string;
  baseUrl?: string;
  signal?: AbortSignal;
}): Promise<Answer> {
  const query = new URLSearchParams({ from: request.from, to: request.to });
  const response = await fetch(`${request.baseUrl ?? psp.url}/v1/statement?${query.toString()}`, {
    signal: request.signal,
  });
  return toAnswer(response);
}

const statementData = (answer: Answer): Charge[] => answer.json['data'] as Charge[];

type OperationPath = 'capture' | 'void' | 'refunds';

/** POST /v1/charges/:id/<path>; an undefined body sends no body at all. */
async function postOperation(request: {
  chargeId: string;
  path: OperationPath;
  key?: string;
  body?: unknown;
  baseUrl?: string;
}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (request.key !== undefined) headers['Idempotency-Key'] = request.key;
  if (request.body !== undefined) headers['Content-Type'] = 'application/json';
  const { body } = request;
  const url = `${request.baseUrl ?? psp.url}/v1/charges/${request.chargeId}/${request.path}`;
  const response = await fetch(url, {
    method: 'POST',
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  return toAnswer(response);
}

const capture = (request: { chargeId: string; amount: string; key?: string }): Promise<Answer> =>
  postOperation({
    chargeId: request.chargeId,
    path: 'capture',
    key: request.key ?? newKey(),
    body: { amount: request.amount },
  });

const voidCharge = (request: { chargeId: string; key?: string }): Promise<Answer> =>
  postOperation({ chargeId: request.chargeId, path: 'void', key: request.key ?? newKey() });

const refund = (request: {
  chargeId: string;
  amount: string;
  key?: string;
  reason?: string;
}): Promise<Answer> =>
  postOperation({
    chargeId: request.chargeId,
    path: 'refunds',
    key: request.key ?? newKey(),
    body: { amount: request.amount, reason: request.reason },
  });

const refundOf = (answer: Answer): Refund => answer.json['refund'] as Refund;
const probeRefundByKey = (key: string): Promise<Answer> =>
  get(`/v1/refunds/by-idempotency-key/${encodeURIComponent(key)}`);
/** The provider's current view of one charge (every test charge has its own reference). */
const current = (charge: Charge): Charge | undefined =>
  psp.charges({ reference: charge.reference })[0];

async function newCharge(overrides: Partial<ChargeBody>): Promise<Charge> {
  const answer = await postCharge({ key: newKey(), body: chargeBody(overrides) });
  expect(answer.status).toBe(200);
  return chargeOf(answer);
}

const authorizedCharge = (amount: string): Promise<Charge> => newCharge({ amount, capture: false });
const capturedCharge = (amount: string): Promise<Charge> => newCharge({ amount, capture: true });

async function declinedCharge(): Promise<Charge> {
  const body = chargeBody({ paymentMethod: 'pm_card_declined', capture: false });
  const answer = await postCharge({ key: newKey(), body });
  expect(answer.status).toBe(402);
  return chargeOf(answer);
}

/** A pm_card_unavailable charge, through its creation outage (503s on one key, then 200). */
async function unavailableCharge(options: { capture: boolean }): Promise<Charge> {
  const body = chargeBody({ paymentMethod: 'pm_card_unavailable', capture: options.capture });
  const key = newKey();
  let answer = await postCharge({ key, body });
  while (answer.status === 503) answer = await postCharge({ key, body });
  expect(answer.status).toBe(200);
  return chargeOf(answer);
}

function expectError(answer: Answer, expected: { status: number; code: string }): void {
  expect({ status: answer.status, code: errorCodeOf(answer) }).toEqual(expected);
}

const isReplay = (answer: Answer): boolean => answer.headers.get('idempotent-replayed') === 'true';
const completeUntilMs = (answer: Answer): number =>
  Date.parse(answer.json['completeUntil'] as string);

describe('approved cards', () => {
  it('captures immediately when capture is true', async () => {
    const body = chargeBody({ paymentMethod: 'pm_card_visa', capture: true });
    const key = newKey();
    const answer = await postCharge({ key, body });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('idempotent-replayed')).toBeNull();
    expect(chargeOf(answer)).toEqual({
      id: expect.stringMatching(/^ch_[0-9a-f]+$/) as unknown,
      amount: '10.50',
      currency: 'EUR',
      status: 'captured',
      amountCaptured: '10.50',
      amountRefunded: '0.00',
      reference: body.reference,
      idempotencyKey: key,
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) as unknown,
      failureCode: null,
      paymentMethod: 'pm_card_visa',
    });
    expect(psp.charges({ reference: body.reference })).toEqual([chargeOf(answer)]);
  });

  it('only authorizes when capture is false, with a zero of the same scale captured', async () => {
    const body = chargeBody({ paymentMethod: 'pm_card_mastercard', capture: false });
    const answer = await postCharge({ key: newKey(), body });
    expect(answer.status).toBe(200);
    expect(chargeOf(answer).status).toBe('authorized');
    expect(chargeOf(answer).amountCaptured).toBe('0.00');
    expect(psp.charges({ reference: body.reference })).toHaveLength(1);
  });

  it('replays an approval for the same key and parameters without a second charge', async () => {
    const body = chargeBody();
    const key = newKey();
    const first = await postCharge({ key, body });
    const second = await postCharge({ key, body });
    expect(second.status).toBe(200);
    expect(second.json).toEqual(first.json);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(psp.charges({ reference: body.reference })).toHaveLength(1);
    expect(psp.attempts({ idempotencyKey: key })).toBe(2);
  });
});

describe('declines', () => {
  it('declines pm_card_declined with 402 and records a declined charge', async () => {
    const body = chargeBody({ paymentMethod: 'pm_card_declined' });
    const answer = await postCharge({ key: newKey(), body });
    expect(answer.status).toBe(402);
    expect(errorCodeOf(answer)).toBe('CARD_DECLINED');
    expect(chargeOf(answer)).toMatchObject({
      status: 'declined',
      failureCode: 'CARD_DECLINED',
      amountCaptured: '0.00',
    });
    expect(psp.charges({ reference: body.reference })).toEqual([chargeOf(answer)]);
  });

  it('replays a decline with the same 402 and charge id', async () => {
    const body = chargeBody({ paymentMethod: 'pm_card_declined' });
    const key = newKey();
    const first = await postCharge({ key, body });
    const replay = await postCharge({ key, body });
    expect(replay.status).toBe(402);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(chargeOf(replay).id).toBe(chargeOf(first).id);
    expect(replay.json).toEqual(first.json);
    expect(psp.charges({ reference: body.reference })).toHaveLength(1);
  });

  it('declines an unknown but well-formed token as INVALID_PAYMENT_METHOD', async () => {
    const body = chargeBody({ paymentMethod: 'pm_card_no_such_card' });
    const answer = await postCharge({ key: newKey(), body });
    expect(answer.status).toBe(402);
    expect(errorCodeOf(answer)).toBe('INVALID_PAYMENT_METHOD');
    expect(chargeOf(answer)).toMatchObject({
      status: 'declined',
      failureCode: 'INVALID_PAYMENT_METHOD',
    });
    expect(psp.charges({ reference: body.reference })).toHaveLength(1);
  });

  it.each(['card_visa', 'pm_', 'pm_card-visa', `pm_${'x'.repeat(101)}`])(
    'rejects the malformed token %s with 400 and records nothing',
    async (paymentMethod) => {
      const body = chargeBody({ paymentMethod });
      const key = newKey();
      const answer = await postCharge({ key, body });
      expect(answer.status).toBe(400);
      expect(errorCodeOf(answer)).toBe('INVALID_REQUEST');
      expect(psp.charges({ reference: body.reference })).toEqual([]);
      expect((await probeByKey(key)).status).toBe(404);
    },
  );
});

describe('request validation', () => {
  it('rejects a request without Idempotency-Key and records nothing', async () => {
    const body = chargeBody();
    const answer = await postCharge({ body });
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({ error: { code: 'IDEMPOTENCY_KEY_MISSING' } });
    expect(psp.charges({ reference: body.reference })).toEqual([]);
    expect(psp.attempts({ reference: body.reference })).toBe(1);
  });

  it('rejects an Idempotency-Key longer than 255 characters', async () => {
    const body = chargeBody();
    const answer = await postCharge({ key: 'k'.repeat(256), body });
    expect(answer.status).toBe(400);
    expect(errorCodeOf(answer)).toBe('INVALID_REQUEST');
    expect(psp.charges({ reference: body.reference })).toEqual([]);
  });

  const invalidBodies: [string, (body: ChargeBody) => unknown][] = [
    ['zero amount', (b) => ({ ...b, amount: '0.00' })],
    ['negative amount', (b) => ({ ...b, amount: '-1.00' })],
    ['numeric amount', (b) => ({ ...b, amount: 10.5 })],
    ['non-decimal amount', (b) => ({ ...b, amount: '1e3' })],
    ['two-letter currency', (b) => ({ ...b, currency: 'EU' })],
    ['missing payment method', (b) => ({ ...b, paymentMethod: undefined })],
    ['missing capture', (b) => ({ ...b, capture: undefined })],
    ['reference too long', (b) => ({ ...b, reference: `${b.reference}${'r'.repeat(255)}` })],
    ['not JSON', () => '{"amount":'],
    ['a JSON array', () => '[]'],
  ];

  it.each(invalidBodies)('rejects %s with 400 and leaves the key unbound', async (_, mutate) => {
    const body = chargeBody();
    const key = newKey();
    const answer = await postCharge({ key, body: mutate(body) });
    expect(answer.status).toBe(400);
    expect(errorCodeOf(answer)).toBe('INVALID_REQUEST');
    expect(typeof (answer.json['error'] as { message?: unknown }).message).toBe('string');
    expect(psp.charges({ reference: body.reference })).toEqual([]);
    // The rejected request bound nothing: the same key still takes a fresh, valid charge.
    const valid = await postCharge({ key, body });
    expect(valid.status).toBe(200);
    expect(valid.headers.get('idempotent-replayed')).toBeNull();
  });

  it('rejects a body over 64 KB', async () => {
    const body = { ...chargeBody(), padding: 'p'.repeat(65 * 1024) };
    const answer = await postCharge({ key: newKey(), body });
    expect(answer.status).toBe(413);
    expect(psp.charges({ reference: body.reference })).toEqual([]);
  });
});

describe('pm_card_unavailable', () => {
  it('answers 503 with Retry-After twice, then approves exactly one charge', async () => {
    const body = chargeBody({ paymentMethod: 'pm_card_unavailable' });
    const key = newKey();
    for (let attempt = 1; attempt <= 2; attempt += 1) {
      const unavailable = await postCharge({ key, body });
      expect(unavailable.status).toBe(503);
      expect(unavailable.json).toEqual({ error: { code: 'PROVIDER_UNAVAILABLE' } });
      expect(unavailable.headers.get('retry-after')).toBe('1');
      expect(psp.charges({ reference: body.reference })).toEqual([]);
    }
    const approved = await postCharge({ key, body });
    expect(approved.status).toBe(200);
    expect(approved.headers.get('idempotent-replayed')).toBeNull();
    expect(psp.charges({ reference: body.reference })).toEqual([chargeOf(approved)]);
    expect(psp.attempts({ idempotencyKey: key })).toBe(3);
    expect(psp.attempts({ reference: body.reference })).toBe(3);
  });
});

describe('pm_card_slow', () => {
  it('approves only after slowMs', async () => {
    const body = chargeBody({ paymentMethod: 'pm_card_slow' });
    const startedAt = Date.now();
    const answer = await postCharge({ key: newKey(), body });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(SLOW_MS - TIMER_SLACK_MS);
    expect(answer.status).toBe(200);
    expect(chargeOf(answer).status).toBe('captured');
  });

  it('makes a concurrent duplicate wait for the first result instead of charging twice', async () => {
    const body = chargeBody({ paymentMethod: 'pm_card_slow' });
    const key = newKey();
    const first = postCharge({ key, body });
    await new Promise((resolve) => setTimeout(resolve, SLOW_MS / 3));
    const duplicate = postCharge({ key, body });
    const [a, b] = await Promise.all([first, duplicate]);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(chargeOf(b).id).toBe(chargeOf(a).id);
    expect(a.headers.get('idempotent-replayed')).toBeNull();
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(psp.charges({ reference: body.reference })).toHaveLength(1);
    expect(psp.attempts({ idempotencyKey: key })).toBe(2);
  });
});

describe('pm_card_lost_response', () => {
  it('applies the charge but never answers the first attempt; later calls see it', async () => {
    const body = chargeBody({ paymentMethod: 'pm_card_lost_response' });
    const key = newKey();
    await expect(postCharge({ key, body, signal: giveUp() })).rejects.toThrow();
    const probe = await probeByKey(key);
    expect(probe.status).toBe(200);
    expect(chargeOf(probe)).toMatchObject({ idempotencyKey: key, status: 'captured' });
    const repeat = await postCharge({ key, body });
    expect(repeat.status).toBe(200);
    expect(repeat.headers.get('idempotent-replayed')).toBe('true');
    expect(chargeOf(repeat).id).toBe(chargeOf(probe).id);
    expect(psp.charges({ reference: body.reference })).toHaveLength(1);
    expect(psp.attempts({ idempotencyKey: key })).toBe(2);
  });
});

describe('pm_card_timeout', () => {
  it('hangs the first attempt without charging, then approves exactly once', async () => {
    const body = chargeBody({ paymentMethod: 'pm_card_timeout' });
    const key = newKey();
    await expect(postCharge({ key, body, signal: giveUp() })).rejects.toThrow();
    expect(psp.charges({ reference: body.reference })).toEqual([]);
    expect((await probeByKey(key)).status).toBe(404);
    const second = await postCharge({ key, body });
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    const third = await postCharge({ key, body });
    expect(chargeOf(third).id).toBe(chargeOf(second).id);
    expect(psp.charges({ reference: body.reference })).toEqual([chargeOf(second)]);
    expect(psp.attempts({ idempotencyKey: key })).toBe(3);
  });
});

describe('pm_card_unknown', () => {
  it('hides the applied charge from calls and probes until the blackhole ends', async () => {
    const body = chargeBody({ paymentMethod: 'pm_card_unknown' });
    const key = newKey();
    const startedAt = Date.now();
    await expect(postCharge({ key, body, signal: giveUp() })).rejects.toThrow();
    await expect(postCharge({ key, body, signal: giveUp() })).rejects.toThrow();
    await expect(probeByKey(key, giveUp())).rejects.toThrow();
    await expect(listByReference(body.reference, giveUp())).rejects.toThrow();
    // The blackhole is scoped to its key and reference: other lookups answer at once.
    expect((await listByReference(newReference(), giveUp())).status).toBe(200);
    expect((await probeByKey(newKey(), giveUp())).status).toBe(404);

    const probe = await probeByKey(key);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(BLACKHOLE_MS - TIMER_SLACK_MS);
    expect(probe.status).toBe(200);
    expect(chargeOf(probe)).toMatchObject({ idempotencyKey: key, status: 'captured' });
    const listing = await listByReference(body.reference, giveUp());
    expect(listing.json).toEqual({ data: [chargeOf(probe)] });
    const repeat = await postCharge({ key, body, signal: giveUp() });
    expect(repeat.status).toBe(200);
    expect(repeat.headers.get('idempotent-replayed')).toBe('true');
    expect(chargeOf(repeat).id).toBe(chargeOf(probe).id);
    expect(psp.charges({ reference: body.reference })).toHaveLength(1);
  });

  it('answers a call that arrived during the blackhole once it ends', async () => {
    const body = chargeBody({ paymentMethod: 'pm_card_unknown' });
    const startedAt = Date.now();
    const answer = await postCharge({ key: newKey(), body });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(BLACKHOLE_MS - TIMER_SLACK_MS);
    expect(answer.status).toBe(200);
    expect(psp.charges({ reference: body.reference })).toEqual([chargeOf(answer)]);
  });
});

describe('pm_card_unreachable', () => {
  it('hangs every attempt for every key and never records anything', async () => {
    const body = chargeBody({ paymentMethod: 'pm_card_unreachable' });
    const key = newKey();
    const startedAt = new Date();
    await expect(postCharge({ key, body, signal: AbortSignal.timeout(100) })).rejects.toThrow();
    await expect(postCharge({ key, body, signal: AbortSignal.timeout(100) })).rejects.toThrow();
    const otherKey = newKey();
    await expect(postCharge({ key: otherKey, body, signal: giveUp() })).rejects.toThrow();
    // Even a key already bound to a charge: the provider never sees the call, so not even a 422.
    const bound = await postCharge({ key: newKey(), body: chargeBody() });
    const boundKey = chargeOf(bound).idempotencyKey;
    await expect(postCharge({ key: boundKey, body, signal: giveUp() })).rejects.toThrow();
    // The calls did arrive; they were just never answered.
    expect(psp.attempts({ reference: body.reference })).toBe(4);

    expect(psp.charges({ reference: body.reference })).toEqual([]);
    for (const probedKey of [key, otherKey]) {
      const probe = await probeByKey(probedKey, giveUp());
      expect(probe.status).toBe(404);
      expect(probe.json).toEqual({ error: { code: 'CHARGE_NOT_FOUND' } });
    }
    expect((await probeByKey(boundKey, giveUp())).json).toEqual(bound.json);
    expect((await listByReference(body.reference, giveUp())).json).toEqual({ data: [] });
    const statement = await getStatement({
      from: startedAt.toISOString(),
      to: new Date(Date.now() + 1).toISOString(),
      signal: giveUp(),
    });
    expect(statement.status).toBe(200);
    expect(statementData(statement)).toEqual([chargeOf(bound)]);
  });
});

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

describe('idempotency key mismatch', () => {
  const changes: [string, Partial<ChargeBody>][] = [
    ['amount', { amount: '10.51' }],
    ['currency', { currency: 'USD' }],
    ['paymentMethod', { paymentMethod: 'pm_card_mastercard' }],
    ['reference', { reference: 'another-reference' }],
    ['capture', { capture: false }],
  ];

  it.each(changes)('answers 422 when %s differs and changes nothing', async (_, change) => {
    const body = chargeBody();
    const key = newKey();
    const original = await postCharge({ key, body });
    const mismatch = await postCharge({ key, body: { ...body, ...change } });
    expect(mismatch.status).toBe(422);
    expect(mismatch.json).toEqual({ error: { code: 'IDEMPOTENCY_KEY_MISMATCH' } });
    expect(psp.charges({ reference: body.reference })).toEqual([chargeOf(original)]);
    expect((await probeByKey(key)).json).toEqual(original.json);
    const replay = await postCharge({ key, body });
    expect(replay.json).toEqual(original.json);
  });
});

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

describe('capture', () => {
  it('captures the full authorized amount once and replays it for the same key', async () => {
    const charge = await authorizedCharge('10.50');
    const key = newKey();
    const captured = await capture({ chargeId: charge.id, amount: '10.50', key });
    expect(captured.status).toBe(200);
    expect(isReplay(captured)).toBe(false);
    expect(captured.json).toEqual({
      charge: { ...charge, status: 'captured', amountCaptured: '10.50' },
    });
    const replay = await capture({ chargeId: charge.id, amount: '10.50', key });
    expect(replay.status).toBe(200);
    expect(isReplay(replay)).toBe(true);
    expect(replay.json).toEqual(captured.json);
    expect(current(charge)).toEqual(chargeOf(captured));
    expect(psp.operations({ chargeId: charge.id })).toEqual([
      { kind: 'capture', idempotencyKey: key, applied: true },
      { kind: 'capture', idempotencyKey: key, applied: false },
    ]);
  });

  it('captures part of the authorization at the charge scale and releases the rest', async () => {
    const charge = await authorizedCharge('10.50');
    const partial = await capture({ chargeId: charge.id, amount: '4' });
    expect(partial.status).toBe(200);
    expect(chargeOf(partial)).toEqual({ ...charge, status: 'captured', amountCaptured: '4.00' });
    // The released 6.50 cannot be captured later: a charge is captured once.
    const rest = await capture({ chargeId: charge.id, amount: '6.50' });
    expectError(rest, { status: 409, code: 'INVALID_CHARGE_STATE' });
    expect(current(charge)?.amountCaptured).toBe('4.00');
  });

  it('accepts trailing zeros beyond the charge scale', async () => {
    const charge = await authorizedCharge('7');
    const captured = await capture({ chargeId: charge.id, amount: '5.000' });
    expect(captured.status).toBe(200);
    expect(chargeOf(captured).amountCaptured).toBe('5');
  });

  it('refuses a second capture with another key with 409, stored and replayed', async () => {
    const charge = await authorizedCharge('10.50');
    const first = await capture({ chargeId: charge.id, amount: '10.50' });
    const key = newKey();
    const second = await capture({ chargeId: charge.id, amount: '1.00', key });
    expect(second.json).toEqual({ error: { code: 'INVALID_CHARGE_STATE' } });
    expect(second.status).toBe(409);
    const replay = await capture({ chargeId: charge.id, amount: '1.00', key });
    expect(replay.status).toBe(409);
    expect(isReplay(replay)).toBe(true);
    expect(replay.json).toEqual(second.json);
    expect(current(charge)).toEqual(chargeOf(first));
    expect(psp.operations({ chargeId: charge.id }).map((o) => o.applied)).toEqual([
      true,
      false,
      false,
    ]);
  });

  it('refuses a capture above the authorized amount with 422, stored, charge untouched', async () => {
    const charge = await authorizedCharge('10.50');
    const key = newKey();
    const over = await capture({ chargeId: charge.id, amount: '10.51', key });
    expectError(over, { status: 422, code: 'AMOUNT_EXCEEDS_AUTHORIZED' });
    expect(current(charge)).toEqual(charge);
    // Another key can still capture; the refused key stays bound to its refusal.
    expect((await capture({ chargeId: charge.id, amount: '10.50' })).status).toBe(200);
    const replay = await capture({ chargeId: charge.id, amount: '10.51', key });
    expectError(replay, { status: 422, code: 'AMOUNT_EXCEEDS_AUTHORIZED' });
    expect(isReplay(replay)).toBe(true);
  });

  it('refuses to capture a declined charge with 409', async () => {
    const charge = await declinedCharge();
    const answer = await capture({ chargeId: charge.id, amount: '1.00' });
    expectError(answer, { status: 409, code: 'INVALID_CHARGE_STATE' });
    expect(current(charge)).toEqual(charge);
  });

  it('answers 404 CHARGE_NOT_FOUND for an unknown charge, stored and replayed', async () => {
    const key = newKey();
    const chargeId = 'ch_doesnotexist';
    const missing = await capture({ chargeId, amount: '1.00', key });
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual({ error: { code: 'CHARGE_NOT_FOUND' } });
    const replay = await capture({ chargeId, amount: '1.00', key });
    expect(replay.status).toBe(404);
    expect(isReplay(replay)).toBe(true);
  });

  const malformed: [string, string | undefined | Record<string, unknown>][] = [
    ['missing amount', {}],
    ['zero amount', { amount: '0.00' }],
    ['negative amount', { amount: '-1.00' }],
    ['numeric amount', { amount: 1 }],
    ['exponent amount', { amount: '1e1' }],
    ['not JSON', '{"amount":'],
    ['a JSON array', '[]'],
    ['no body', undefined],
  ];

  it.each(malformed)('rejects %s with 400 and binds nothing', async (_, body) => {
    const charge = await authorizedCharge('10.50');
    const key = newKey();
    const answer = await postOperation({ chargeId: charge.id, path: 'capture', key, body });
    expectError(answer, { status: 400, code: 'INVALID_REQUEST' });
    expect(current(charge)).toEqual(charge);
    expect(psp.operations({ chargeId: charge.id })).toEqual([]);
    const valid = await capture({ chargeId: charge.id, amount: '1.00', key });
    expect(valid.status).toBe(200);
    expect(isReplay(valid)).toBe(false);
  });

  it('rejects an amount finer than the charge scale with 400 and binds nothing', async () => {
    const charge = await authorizedCharge('10.50');
    const key = newKey();
    const answer = await capture({ chargeId: charge.id, amount: '1.001', key });
    expectError(answer, { status: 400, code: 'INVALID_REQUEST' });
    expect(current(charge)).toEqual(charge);
    const valid = await capture({ chargeId: charge.id, amount: '1.00', key });
    expect(valid.status).toBe(200);
    expect(isReplay(valid)).toBe(false);
  });

  it('requires an Idempotency-Key', async () => {
    const charge = await authorizedCharge('10.50');
    const body = { amount: '1.00' };
    const answer = await postOperation({ chargeId: charge.id, path: 'capture', body });
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({ error: { code: 'IDEMPOTENCY_KEY_MISSING' } });
    expect(current(charge)).toEqual(charge);
  });

  it('applies one capture for ten concurrent requests with one key', async () => {
    const charge = await authorizedCharge('10.50');
    const key = newKey();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => capture({ chargeId: charge.id, amount: '3.00', key })),
    );
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(answers.filter((a) => !isReplay(a))).toHaveLength(1);
    for (const answer of answers) expect(answer.json).toEqual(answers[0]?.json);
    const operations = psp.operations({ chargeId: charge.id });
    expect(operations).toHaveLength(10);
    expect(operations.filter((o) => o.applied)).toHaveLength(1);
  });
});

describe('void', () => {
  it('voids an authorized charge (no body) once and replays it', async () => {
    const charge = await authorizedCharge('10.50');
    const key = newKey();
    const voided = await voidCharge({ chargeId: charge.id, key });
    expect(voided.status).toBe(200);
    expect(voided.json).toEqual({ charge: { ...charge, status: 'voided' } });
    const replay = await voidCharge({ chargeId: charge.id, key });
    expect(isReplay(replay)).toBe(true);
    expect(replay.json).toEqual(voided.json);
    expect(current(charge)).toEqual(chargeOf(voided));
    expect(psp.operations({ chargeId: charge.id })).toEqual([
      { kind: 'void', idempotencyKey: key, applied: true },
      { kind: 'void', idempotencyKey: key, applied: false },
    ]);
  });

  it('accepts an empty JSON object as the body', async () => {
    const charge = await authorizedCharge('10.50');
    const body = {};
    const voided = await postOperation({ chargeId: charge.id, path: 'void', key: newKey(), body });
    expect(voided.status).toBe(200);
    expect(chargeOf(voided).status).toBe('voided');
  });

  it('refuses to capture a voided charge with 409', async () => {
    const charge = await authorizedCharge('10.50');
    const voided = await voidCharge({ chargeId: charge.id });
    const key = newKey();
    const captured = await capture({ chargeId: charge.id, amount: '1.00', key });
    expectError(captured, { status: 409, code: 'INVALID_CHARGE_STATE' });
    expect(isReplay(await capture({ chargeId: charge.id, amount: '1.00', key }))).toBe(true);
    expect(current(charge)).toEqual(chargeOf(voided));
  });

  it('refuses to void a captured, voided or declined charge with 409, stored', async () => {
    const captured = await capturedCharge('10.00');
    const voided = await authorizedCharge('10.50');
    await voidCharge({ chargeId: voided.id });
    const declined = await declinedCharge();
    for (const charge of [captured, voided, declined]) {
      const key = newKey();
      expectError(await voidCharge({ chargeId: charge.id, key }), {
        status: 409,
        code: 'INVALID_CHARGE_STATE',
      });
      const replay = await voidCharge({ chargeId: charge.id, key });
      expectError(replay, { status: 409, code: 'INVALID_CHARGE_STATE' });
      expect(isReplay(replay)).toBe(true);
    }
    expect(current(captured)).toEqual(captured);
    expect(current(declined)).toEqual(declined);
  });

  it('answers 404 CHARGE_NOT_FOUND for an unknown charge, stored', async () => {
    const key = newKey();
    expectError(await voidCharge({ chargeId: 'ch_missing', key }), {
      status: 404,
      code: 'CHARGE_NOT_FOUND',
    });
    expect(isReplay(await voidCharge({ chargeId: 'ch_missing', key }))).toBe(true);
  });

  it.each([
    ['parameters', { amount: '1.00' }],
    ['a JSON array', '[]'],
    ['not JSON', '{'],
  ])('rejects a void with %s with 400 and binds nothing', async (_, body) => {
    const charge = await authorizedCharge('10.50');
    const key = newKey();
    const answer = await postOperation({ chargeId: charge.id, path: 'void', key, body });
    expectError(answer, { status: 400, code: 'INVALID_REQUEST' });
    expect(current(charge)).toEqual(charge);
    const valid = await voidCharge({ chargeId: charge.id, key });
    expect(valid.status).toBe(200);
    expect(isReplay(valid)).toBe(false);
  });
});

describe('refunds', () => {
  it('refunds a captured charge in parts and refuses going over what is left', async () => {
    const charge = await capturedCharge('10.00');
    const firstKey = newKey();
    const first = await refund({
      chargeId: charge.id,
      amount: '3',
      key: firstKey,
      reason: 'requested_by_customer',
    });
    expect(first.status).toBe(200);
    expect(first.json).toEqual({
      refund: {
        id: expect.stringMatching(/^re_[0-9a-f]+$/) as unknown,
        chargeId: charge.id,
        amount: '3.00',
        status: 'succeeded',
        reason: 'requested_by_customer',
        idempotencyKey: firstKey,
        createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) as unknown,
      },
      charge: { ...charge, amountRefunded: '3.00' },
    });
    const second = await refund({ chargeId: charge.id, amount: '4.5' });
    expect(refundOf(second)).toMatchObject({ amount: '4.50', reason: null });
    expect(chargeOf(second).amountRefunded).toBe('7.50');

    const overKey = newKey();
    const over = await refund({ chargeId: charge.id, amount: '2.51', key: overKey });
    expect(over.status).toBe(422);
    expect(over.json).toEqual({ error: { code: 'AMOUNT_EXCEEDS_REFUNDABLE' } });
    expect(isReplay(await refund({ chargeId: charge.id, amount: '2.51', key: overKey }))).toBe(
      true,
    );
    const last = await refund({ chargeId: charge.id, amount: '2.50' });
    expect(chargeOf(last)).toEqual({ ...charge, status: 'captured', amountRefunded: '10.00' });
    const nothingLeft = await refund({ chargeId: charge.id, amount: '0.01' });
    expectError(nothingLeft, { status: 422, code: 'AMOUNT_EXCEEDS_REFUNDABLE' });

    const refunds = [refundOf(first), refundOf(second), refundOf(last)];
    expect(psp.refunds({ chargeId: charge.id })).toEqual(refunds);
    expect((await get(`/v1/charges/${charge.id}/refunds`)).json).toEqual({ data: refunds });
    expect(current(charge)).toEqual(chargeOf(last));
  });

  it('limits refunds to the captured part of a partial capture', async () => {
    const charge = await authorizedCharge('10.00');
    await capture({ chargeId: charge.id, amount: '6.00' });
    const over = await refund({ chargeId: charge.id, amount: '6.01' });
    expectError(over, { status: 422, code: 'AMOUNT_EXCEEDS_REFUNDABLE' });
    const all = await refund({ chargeId: charge.id, amount: '6.00' });
    expect(all.status).toBe(200);
    expect(chargeOf(all)).toMatchObject({ amountCaptured: '6.00', amountRefunded: '6.00' });
  });

  it('refuses a refund before capture with 409 and keeps that answer after capture', async () => {
    const charge = await authorizedCharge('10.00');
    const key = newKey();
    const early = await refund({ chargeId: charge.id, amount: '1.00', key });
    expectError(early, { status: 409, code: 'INVALID_CHARGE_STATE' });
    await capture({ chargeId: charge.id, amount: '10.00' });
    const replay = await refund({ chargeId: charge.id, amount: '1.00', key });
    expectError(replay, { status: 409, code: 'INVALID_CHARGE_STATE' });
    expect(isReplay(replay)).toBe(true);
    expect((await refund({ chargeId: charge.id, amount: '1.00' })).status).toBe(200);
    expect(psp.refunds({ chargeId: charge.id })).toHaveLength(1);
  });

  it('refuses to refund a voided or declined charge with 409', async () => {
    const voided = await authorizedCharge('10.00');
    await voidCharge({ chargeId: voided.id });
    const declined = await declinedCharge();
    for (const charge of [voided, declined]) {
      const answer = await refund({ chargeId: charge.id, amount: '1.00' });
      expectError(answer, { status: 409, code: 'INVALID_CHARGE_STATE' });
      expect(psp.refunds({ chargeId: charge.id })).toEqual([]);
    }
  });

  it('answers 404 CHARGE_NOT_FOUND for an unknown charge, stored', async () => {
    const key = newKey();
    const missing = await refund({ chargeId: 'ch_missing', amount: '1.00', key });
    expectError(missing, { status: 404, code: 'CHARGE_NOT_FOUND' });
    expect(isReplay(await refund({ chargeId: 'ch_missing', amount: '1.00', key }))).toBe(true);
    expectError(await get('/v1/charges/ch_missing/refunds'), {
      status: 404,
      code: 'CHARGE_NOT_FOUND',
    });
  });

  it('refunds once for ten concurrent requests with one key', async () => {
    const charge = await capturedCharge('10.00');
    const key = newKey();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => refund({ chargeId: charge.id, amount: '1.00', key })),
    );
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(answers.filter((a) => !isReplay(a))).toHaveLength(1);
    expect(new Set(answers.map((a) => refundOf(a).id)).size).toBe(1);
    expect(psp.refunds({ chargeId: charge.id })).toHaveLength(1);
    expect(current(charge)?.amountRefunded).toBe('1.00');
  });

  it('never refunds more than was captured under concurrent refunds with different keys', async () => {
    const charge = await capturedCharge('10.00');
    const amounts = Array.from({ length: 20 }, () => '1.00');
    amounts.splice(10, 0, '5.00');
    const answers = await Promise.all(
      amounts.map((amount) => refund({ chargeId: charge.id, amount })),
    );
    const applied = answers.filter((a) => a.status === 200);
    for (const refused of answers.filter((a) => a.status !== 200)) {
      expectError(refused, { status: 422, code: 'AMOUNT_EXCEEDS_REFUNDABLE' });
    }
    // Whatever the order, 1.00 refunds fill any gap the 5.00 leaves: exactly 10.00 goes back.
    const refundedCents = applied.reduce(
      (sum, a) => sum + Math.round(Number(refundOf(a).amount) * 100),
      0,
    );
    expect(refundedCents).toBe(1_000);
    expect(current(charge)?.amountRefunded).toBe('10.00');
    expect(psp.refunds({ chargeId: charge.id })).toHaveLength(applied.length);
    const operations = psp.operations({ chargeId: charge.id });
    expect(operations).toHaveLength(amounts.length);
    expect(operations.filter((o) => o.applied)).toHaveLength(applied.length);
  });

  const malformed: [string, Record<string, unknown>][] = [
    ['missing amount', { reason: 'duplicate' }],
    ['zero amount', { amount: '0' }],
    ['empty reason', { amount: '1.00', reason: '' }],
    ['numeric reason', { amount: '1.00', reason: 7 }],
    ['reason too long', { amount: '1.00', reason: 'r'.repeat(256) }],
  ];

  it.each(malformed)('rejects %s with 400 and binds nothing', async (_, body) => {
    const charge = await capturedCharge('10.00');
    const key = newKey();
    const answer = await postOperation({ chargeId: charge.id, path: 'refunds', key, body });
    expectError(answer, { status: 400, code: 'INVALID_REQUEST' });
    expect(psp.refunds({ chargeId: charge.id })).toEqual([]);
    const valid = await refund({ chargeId: charge.id, amount: '1.00', key });
    expect(valid.status).toBe(200);
    expect(isReplay(valid)).toBe(false);
  });
});

describe('operation idempotency keys', () => {
  const mismatch = { status: 422, code: 'IDEMPOTENCY_KEY_MISMATCH' };

  it('answers 422 to the same key with another amount, operation or charge', async () => {
    const charge = await authorizedCharge('10.00');
    const other = await authorizedCharge('10.00');
    const key = newKey();
    const original = await capture({ chargeId: charge.id, amount: '5.00', key });
    expect(original.status).toBe(200);
    expectError(await capture({ chargeId: charge.id, amount: '6.00', key }), mismatch);
    expectError(await capture({ chargeId: charge.id, amount: '5.0', key }), mismatch);
    expectError(await voidCharge({ chargeId: charge.id, key }), mismatch);
    expectError(await refund({ chargeId: charge.id, amount: '5.00', key }), mismatch);
    expectError(await capture({ chargeId: other.id, amount: '5.00', key }), mismatch);
    expect(current(charge)).toEqual(chargeOf(original));
    expect(current(other)).toEqual(other);
    expect(psp.refunds({ chargeId: charge.id })).toEqual([]);
    const replay = await capture({ chargeId: charge.id, amount: '5.00', key });
    expect(isReplay(replay)).toBe(true);
    expect(replay.json).toEqual(original.json);
  });

  it('applies one of concurrent requests with one key on two charges, the rest mismatch', async () => {
    const charges = [await authorizedCharge('10.00'), await authorizedCharge('10.00')];
    const key = newKey();
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        capture({ chargeId: charges[index % 2]?.id ?? '', amount: '1.00', key }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(5);
    expect(statuses.filter((status) => status === 422)).toHaveLength(5);
    const capturedCount = charges.filter((c) => current(c)?.status === 'captured').length;
    expect(capturedCount).toBe(1);
  });

  it('binds a refund key to its reason too', async () => {
    const charge = await capturedCharge('10.00');
    const key = newKey();
    expect((await refund({ chargeId: charge.id, amount: '1.00', key, reason: 'a' })).status).toBe(
      200,
    );
    expectError(await refund({ chargeId: charge.id, amount: '1.00', key, reason: 'b' }), mismatch);
    expectError(await refund({ chargeId: charge.id, amount: '1.00', key }), mismatch);
    expect(current(charge)?.amountRefunded).toBe('1.00');
  });

  it('binds a refused key to its refusal: another operation with it is a mismatch', async () => {
    const key = newKey();
    expect((await voidCharge({ chargeId: 'ch_missing', key })).status).toBe(404);
    const charge = await authorizedCharge('10.00');
    expectError(await voidCharge({ chargeId: charge.id, key }), mismatch);
    expect(current(charge)).toEqual(charge);
  });

  it('keeps charge creation keys and operation keys in one space', async () => {
    const body = chargeBody({ capture: false });
    const chargeKey = newKey();
    const charge = chargeOf(await postCharge({ key: chargeKey, body }));
    expectError(await capture({ chargeId: charge.id, amount: '1.00', key: chargeKey }), mismatch);
    expect(current(charge)).toEqual(charge);
    const captureKey = newKey();
    expect((await capture({ chargeId: charge.id, amount: '1.00', key: captureKey })).status).toBe(
      200,
    );
    expectError(await postCharge({ key: captureKey, body: chargeBody() }), mismatch);
    expect((await probeByKey(captureKey)).status).toBe(404);
  });
});

describe('pm_card_unavailable on capture, void and refund', () => {
  it('answers the first capture per key with 503, storing nothing, then applies it', async () => {
    const charge = await unavailableCharge({ capture: false });
    const key = newKey();
    const unavailable = await capture({ chargeId: charge.id, amount: '10.50', key });
    expect(unavailable.status).toBe(503);
    expect(unavailable.json).toEqual({ error: { code: 'PROVIDER_UNAVAILABLE' } });
    expect(unavailable.headers.get('retry-after')).toBe('1');
    expect(current(charge)).toEqual(charge);
    const applied = await capture({ chargeId: charge.id, amount: '10.50', key });
    expect(applied.status).toBe(200);
    expect(isReplay(applied)).toBe(false);
    expect(chargeOf(applied).status).toBe('captured');
    expect(isReplay(await capture({ chargeId: charge.id, amount: '10.50', key }))).toBe(true);
    expect(psp.operations({ chargeId: charge.id })).toEqual([
      { kind: 'capture', idempotencyKey: key, applied: false },
      { kind: 'capture', idempotencyKey: key, applied: true },
      { kind: 'capture', idempotencyKey: key, applied: false },
    ]);
  });

  it('answers the first refund of every key with 503, then refunds once', async () => {
    const charge = await unavailableCharge({ capture: true });
    for (const [index, key] of [newKey(), newKey()].entries()) {
      expect((await refund({ chargeId: charge.id, amount: '1.00', key })).status).toBe(503);
      expect(psp.refunds({ chargeId: charge.id })).toHaveLength(index);
      expect((await refund({ chargeId: charge.id, amount: '1.00', key })).status).toBe(200);
    }
    expect(psp.refunds({ chargeId: charge.id })).toHaveLength(2);
    expect(current(charge)?.amountRefunded).toBe('2.00');
  });

  it('does not store the 503: a refusal comes only on the next attempt', async () => {
    const charge = await unavailableCharge({ capture: true });
    const key = newKey();
    expect((await voidCharge({ chargeId: charge.id, key })).status).toBe(503);
    const refused = await voidCharge({ chargeId: charge.id, key });
    expectError(refused, { status: 409, code: 'INVALID_CHARGE_STATE' });
    expect(isReplay(refused)).toBe(false);
    expect(isReplay(await voidCharge({ chargeId: charge.id, key }))).toBe(true);
  });

  it('answers the first void per key with 503, then voids', async () => {
    const charge = await unavailableCharge({ capture: false });
    const key = newKey();
    expect((await voidCharge({ chargeId: charge.id, key })).status).toBe(503);
    expect(current(charge)?.status).toBe('authorized');
    expect(chargeOf(await voidCharge({ chargeId: charge.id, key })).status).toBe('voided');
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

describe('close', () => {
  /** close() must not wait for deliberately hanging requests; far below every hang used here. */
  const CLOSE_BUDGET_MS = 1_000;
  /** Fails a close() that waits for the hangs quickly instead of after the 60 s default. */
  const CLOSE_TEST_TIMEOUT_MS = 5_000;

  it(
    'ends hanging requests and stops listening promptly',
    async () => {
      const local = await startSandboxPsp({ slowMs: 60_000, blackholeMs: 60_000 });
      const hanging = [
        'pm_card_lost_response',
        'pm_card_timeout',
        'pm_card_slow',
        'pm_card_unknown',
        'pm_card_unreachable',
      ].map((paymentMethod) =>
        postCharge({ baseUrl: local.url, key: newKey(), body: chargeBody({ paymentMethod }) }).then(
          () => 'answered',
          () => 'cut off',
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, CLIENT_GIVE_UP_MS));
      expect(local.attempts()).toBe(hanging.length);
      const startedAt = Date.now();
      await local.close();
      expect(Date.now() - startedAt).toBeLessThan(CLOSE_BUDGET_MS);
      expect(await Promise.all(hanging)).toEqual(hanging.map(() => 'cut off'));
      await expect(fetch(`${local.url}/v1/health`)).rejects.toThrow();
    },
    CLOSE_TEST_TIMEOUT_MS,
  );
});
