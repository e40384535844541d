// The sandbox payment provider's contract, shared by the files under test/contract/sandbox-psp/:
// its timings, a client for its HTTP API, and the sandbox each file starts.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect } from 'vitest';
import type { Charge, Refund, SandboxPsp } from '../../../sandbox-psp/sandbox-server.ts';
import { startSandboxPsp } from '../../../sandbox-psp/sandbox-server.ts';

/** Short enough to keep the suite fast, long enough to overlap a duplicate request. */
export const SLOW_MS = 300;
/** Short enough to wait out in a test, longer than CLIENT_GIVE_UP_MS so calls visibly hang. */
export const BLACKHOLE_MS = 500;
/** How long a client waits before it treats a call as timed out. */
export const CLIENT_GIVE_UP_MS = 100;
/** Slack for timer granularity when asserting "not before" a deadline. */
export const TIMER_SLACK_MS = 25;
/** The books' settlement lag in the statement tests: neither 0 nor the 1 s default, so a
 * server that ignored the option would be caught, and far shorter than BOOKS_SLOW_MS so a
 * statement cut while a slow charge is in flight already calls its arrival instant complete. */
export const STATEMENT_LAG_MS = 100;
/** pm_card_slow in the statement tests: a wide window between "arrival is final" (after
 * STATEMENT_LAG_MS) and "charge recorded", so the in-flight check keeps its teeth under load. */
export const BOOKS_SLOW_MS = 1_000;
/** A blackhole that outlasts every statement test, so "during the blackhole" is never racy. */
export const LONG_BLACKHOLE_MS = 60_000;
/** How long a call that must be answered may take (answeredSoon). */
export const ANSWERED_SOON_MS = 5_000;
/** Pause between two charges so their createdAt differ by whole milliseconds. */
export const DISTINCT_MS_GAP_MS = 5;

export interface ChargeBody {
  amount: string;
  currency: string;
  paymentMethod: string;
  reference: string;
  capture: boolean;
}

export interface Answer {
  status: number;
  headers: Headers;
  json: Record<string, unknown>;
}

/**
 * The sandbox a contract file's tests talk to, started by useSandboxPsp(). A module binding, not a
 * shared singleton: vitest loads this module afresh for each test file (pool: forks, isolated).
 */
export let psp: SandboxPsp;

/** Starts one sandbox for the calling test file (slowMs SLOW_MS, blackholeMs BLACKHOLE_MS). */
export function useSandboxPsp(): void {
  beforeAll(async () => {
    psp = await startSandboxPsp({ port: 0, slowMs: SLOW_MS, blackholeMs: BLACKHOLE_MS });
  });
  afterAll(async () => {
    await psp.close();
  });
}

export const newKey = (): string => `key-${randomUUID()}`;
export const newReference = (): string => `order-${randomUUID()}`;

export function chargeBody(overrides: Partial<ChargeBody> = {}): ChargeBody {
  return {
    amount: '10.50',
    currency: 'EUR',
    paymentMethod: 'pm_card_visa',
    reference: newReference(),
    capture: true,
    ...overrides,
  };
}

export async function toAnswer(response: Response): Promise<Answer> {
  const json = (await response.json()) as Record<string, unknown>;
  return { status: response.status, headers: response.headers, json };
}

export async function postCharge(request: {
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

export async function get(path: string, signal?: AbortSignal, baseUrl?: string): Promise<Answer> {
  return toAnswer(await fetch(`${baseUrl ?? psp.url}${path}`, { signal }));
}

export const probeByKey = (key: string, signal?: AbortSignal, baseUrl?: string): Promise<Answer> =>
  get(`/v1/charges/by-idempotency-key/${encodeURIComponent(key)}`, signal, baseUrl);

export const listByReference = (
  reference: string,
  signal?: AbortSignal,
  baseUrl?: string,
): Promise<Answer> =>
  get(`/v1/charges?reference=${encodeURIComponent(reference)}`, signal, baseUrl);

export const chargeOf = (answer: Answer): Charge => answer.json['charge'] as Charge;
export const errorCodeOf = (answer: Answer): unknown =>
  (answer.json['error'] as { code?: unknown } | undefined)?.code;
export const giveUp = (): AbortSignal => AbortSignal.timeout(CLIENT_GIVE_UP_MS);
/**
 * For a call that must be answered, not held: long enough for any stall of a loaded machine,
 * far shorter than LONG_BLACKHOLE_MS, so an answer within it was not held by a blackhole.
 */
export const answeredSoon = (): AbortSignal => AbortSignal.timeout(ANSWERED_SOON_MS);
export const pause = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));

export async function getStatement(request: {
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

export const statementData = (answer: Answer): Charge[] => answer.json['data'] as Charge[];

export type OperationPath = 'capture' | 'void' | 'refunds';

/** POST /v1/charges/:id/<path>; an undefined body sends no body at all. */
export async function postOperation(request: {
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

/** An operation on a charge under `request.key`, or under a fresh key when the test names none. */
const operateOnCharge = (
  path: OperationPath,
  request: { chargeId: string; key?: string },
  body?: Record<string, unknown>,
): Promise<Answer> =>
  postOperation({ chargeId: request.chargeId, path, key: request.key ?? newKey(), body });

export const capture = (request: {
  chargeId: string;
  amount: string;
  key?: string;
}): Promise<Answer> => operateOnCharge('capture', request, { amount: request.amount });

export const voidCharge = (request: { chargeId: string; key?: string }): Promise<Answer> =>
  operateOnCharge('void', request);

export const refund = (request: {
  chargeId: string;
  amount: string;
  key?: string;
  reason?: string;
}): Promise<Answer> =>
  operateOnCharge('refunds', request, { amount: request.amount, reason: request.reason });

export const refundOf = (answer: Answer): Refund => answer.json['refund'] as Refund;
export const probeRefundByKey = (key: string): Promise<Answer> =>
  get(`/v1/refunds/by-idempotency-key/${encodeURIComponent(key)}`);
export const probeCaptureByKey = (key: string): Promise<Answer> =>
  get(`/v1/captures/by-idempotency-key/${encodeURIComponent(key)}`);
export const probeVoidByKey = (key: string): Promise<Answer> =>
  get(`/v1/voids/by-idempotency-key/${encodeURIComponent(key)}`);
/** The provider's current view of one charge (every test charge has its own reference). */
export const current = (charge: Charge): Charge | undefined =>
  psp.charges({ reference: charge.reference })[0];

export async function newCharge(overrides: Partial<ChargeBody>): Promise<Charge> {
  const answer = await postCharge({ key: newKey(), body: chargeBody(overrides) });
  expect(answer.status).toBe(200);
  return chargeOf(answer);
}

export const authorizedCharge = (amount: string): Promise<Charge> =>
  newCharge({ amount, capture: false });
export const capturedCharge = (amount: string): Promise<Charge> =>
  newCharge({ amount, capture: true });

export async function declinedCharge(): Promise<Charge> {
  const body = chargeBody({ paymentMethod: 'pm_card_declined', capture: false });
  const answer = await postCharge({ key: newKey(), body });
  expect(answer.status).toBe(402);
  return chargeOf(answer);
}

/** A pm_card_unavailable charge, through its creation outage (503s on one key, then 200). */
export async function unavailableCharge(options: { capture: boolean }): Promise<Charge> {
  const body = chargeBody({ paymentMethod: 'pm_card_unavailable', capture: options.capture });
  const key = newKey();
  let answer = await postCharge({ key, body });
  while (answer.status === 503) answer = await postCharge({ key, body });
  expect(answer.status).toBe(200);
  return chargeOf(answer);
}

export function expectError(answer: Answer, expected: { status: number; code: string }): void {
  expect({ status: answer.status, code: errorCodeOf(answer) }).toEqual(expected);
}

/** `answer` is the refusal `expected`, and the provider's view of `charge` is as it was before. */
export function expectRefusedLeavingCharge(
  answer: Answer,
  charge: Charge,
  expected: { status: number; code: string },
): void {
  expectError(answer, expected);
  expect(current(charge)).toEqual(charge);
}

export const isReplay = (answer: Answer): boolean =>
  answer.headers.get('idempotent-replayed') === 'true';
export const completeUntilMs = (answer: Answer): number =>
  Date.parse(answer.json['completeUntil'] as string);

/**
 * `replay`, sent under the key that applied `applied`, answered it again and changed nothing:
 * marked as a replay, the same body, the charge as `applied` left it, and on the charge the one
 * applied operation followed by the replay, not applied.
 */
export function expectOperationReplayed(run: {
  applied: Answer;
  replay: Answer;
  charge: Charge;
  kind: 'capture' | 'void';
  key: string;
}): void {
  const { applied, replay, charge, kind, key } = run;
  expect(isReplay(replay)).toBe(true);
  expect(replay.json).toEqual(applied.json);
  expect(current(charge)).toEqual(chargeOf(applied));
  expect(psp.operations({ chargeId: charge.id })).toEqual([
    { kind, idempotencyKey: key, applied: true },
    { kind, idempotencyKey: key, applied: false },
  ]);
}
