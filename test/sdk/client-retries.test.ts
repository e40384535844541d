/**
 * The SDK's retry rules over a scripted transport (scripted-fetch.ts): what is sent again and
 * with which headers, what is never sent again, how long it waits, and when it stops.
 */
import { describe, expect, it } from 'vitest';
import {
  createPaymentsClient,
  PaymentsApiError,
  type AttemptReport,
  type PaymentsClientOptions,
} from '../../packages/client/src/index.ts';
import {
  errorAnswer,
  keyOf,
  paymentAnswer,
  scriptedFetch,
  type ScriptedFetch,
  type Step,
} from './scripted-fetch.ts';

const URL = 'http://127.0.0.1:9/graphql';
const INPUT = { amount: '10.50', currency: 'EUR', paymentMethod: 'pm_card_visa' };
/** Small backoffs, so a test's retries cost milliseconds; Retry-After still applies in full. */
const FAST = { baseMs: 1, capMs: 5 };

function clientOver(
  script: ScriptedFetch,
  options: Partial<PaymentsClientOptions> = {},
): ReturnType<typeof createPaymentsClient> {
  return createPaymentsClient({
    url: URL,
    apiKey: 'sk_test_sdk',
    fetch: script.fetch,
    backoff: FAST,
    ...options,
  });
}

async function failureOf(call: Promise<unknown>): Promise<PaymentsApiError> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof PaymentsApiError))
    throw new Error(`expected a PaymentsApiError, got ${String(error)}`);
  return error;
}

describe('one logical call', () => {
  it('sends one key on every attempt, each attempt with its own request id and number', async () => {
    const script = scriptedFetch([
      { fail: 'network' },
      { hang: true },
      { status: 502, body: '<html>bad gateway</html>' },
      errorAnswer({ status: 409, code: 'IDEMPOTENCY_KEY_IN_USE' }),
      paymentAnswer('k'),
    ]);
    const client = clientOver(script, { attemptTimeoutMs: 100 });
    await client.createPayment(INPUT);
    expect(script.sent).toHaveLength(5);
    const key = keyOf(script.sent[0]);
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    expect(script.sent.map(keyOf)).toEqual([key, key, key, key, key]);
    expect(script.sent.map((r) => r.headers['idempotency-attempt'])).toEqual([
      '1',
      '2',
      '3',
      '4',
      '5',
    ]);
    const requestIds = script.sent.map((r) => r.headers['x-request-id']);
    expect(new Set(requestIds).size).toBe(5);
    for (const id of requestIds) expect(id).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
    expect(script.sent[0]?.headers['authorization']).toBe('Bearer sk_test_sdk');
    expect(script.sent[0]?.body.operationName).toBe('CreatePayment');
  });

  it('uses the key the caller gives, and a new one for each call otherwise', async () => {
    const script = scriptedFetch([paymentAnswer('k')]);
    const client = clientOver(script);
    await client.createPayment(INPUT, { idempotencyKey: 'order-1042' });
    await client.createPayment(INPUT);
    await client.createPayment(INPUT);
    const [given, first, second] = script.sent.map(keyOf);
    expect(given).toBe('order-1042');
    expect(first).not.toBe(second);
  });

  it('asks mutations to wait for an in-flight duplicate (Prefer: wait), never reads', async () => {
    const script = scriptedFetch([
      paymentAnswer('k'),
      { status: 200, body: { data: { payment: null } } },
    ]);
    const client = clientOver(script, { preferWaitSeconds: 4 });
    await client.createPayment(INPUT);
    await client.payment('pay_x');
    expect(script.sent[0]?.headers['prefer']).toBe('wait=4');
    expect(script.sent[1]?.headers).not.toHaveProperty('prefer');
    // An attempt too short to hear the answer after the wait asks for a shorter wait, or none.
    const short = scriptedFetch([paymentAnswer('k')]);
    await clientOver(short, { preferWaitSeconds: 5, attemptTimeoutMs: 3_500 }).createPayment(INPUT);
    expect(short.sent[0]?.headers['prefer']).toBe('wait=2');
    const none = scriptedFetch([paymentAnswer('k')]);
    await clientOver(none, { preferWaitSeconds: 0 }).createPayment(INPUT);
    expect(none.sent[0]?.headers).not.toHaveProperty('prefer');
  });

  it.each([
    ['IDEMPOTENCY_KEY_IN_USE', 409],
    ['OUTCOME_PENDING', 202],
    ['RATE_LIMITED', 429],
    ['PROVIDER_UNAVAILABLE', 503],
    ['INTERNAL_SERVER_ERROR', 500],
  ])('retries a mutation answered %s (HTTP %d) with the same key', async (code, status) => {
    const script = scriptedFetch([errorAnswer({ status, code }), paymentAnswer('k')]);
    const answer = await clientOver(script).createPayment(INPUT);
    expect(answer.payment.id).toBe('pay_1');
    expect(script.sent).toHaveLength(2);
    expect(keyOf(script.sent[1])).toBe(keyOf(script.sent[0]));
  });

  it.each([
    ['PAYMENT_NOT_FOUND', 404],
    ['INVALID_PAYMENT_STATE', 422],
    ['AMOUNT_EXCEEDS_CAPTURABLE', 422],
    ['AMOUNT_EXCEEDS_REFUNDABLE', 422],
    ['BAD_USER_INPUT', 400],
    ['WEBHOOK_URL_NOT_ALLOWED', 400],
    ['UNAUTHENTICATED', 401],
    ['IDEMPOTENCY_KEY_REUSED', 422],
  ])('never sends %s (HTTP %d) again, and says it is final', async (code, status) => {
    const script = scriptedFetch([errorAnswer({ status, code }), paymentAnswer('k')]);
    const error = await failureOf(clientOver(script).createPayment(INPUT));
    expect(script.sent).toHaveLength(1);
    expect(error).toMatchObject({ code, httpStatus: status, retryable: false, attempts: 1 });
    expect(error.requestIds).toEqual([script.sent[0]?.headers['x-request-id']]);
    expect(error.idempotencyKey).toBe(keyOf(script.sent[0]));
  });

  it('throws retryable, with the pending payment, when its attempts run out', async () => {
    const pending = errorAnswer({
      status: 202,
      code: 'OUTCOME_PENDING',
      extensions: { paymentId: 'pay_pending', retryAfterSeconds: 0 },
    });
    const script = scriptedFetch([pending]);
    const error = await failureOf(clientOver(script, { maxAttempts: 3 }).createPayment(INPUT));
    expect(script.sent).toHaveLength(3);
    expect(error).toMatchObject({
      code: 'OUTCOME_PENDING',
      httpStatus: 202,
      retryable: true,
      attempts: 3,
      paymentId: 'pay_pending',
    });
    expect(error.requestIds).toEqual(script.sent.map((r) => r.headers['x-request-id']));
  });

  it('keeps the payment an earlier answer named when a later attempt is lost', async () => {
    const script = scriptedFetch([
      errorAnswer({ status: 202, code: 'OUTCOME_PENDING', extensions: { paymentId: 'pay_9' } }),
      { fail: 'network' },
    ]);
    const error = await failureOf(clientOver(script, { maxAttempts: 2 }).createPayment(INPUT));
    expect(error).toMatchObject({ code: 'NETWORK_ERROR', retryable: true, paymentId: 'pay_9' });
  });
});

describe('waiting', () => {
  it('honours Retry-After, from the header or from extensions.retryAfterSeconds', async () => {
    const script = scriptedFetch([
      errorAnswer({ status: 409, code: 'IDEMPOTENCY_KEY_IN_USE', headers: { 'retry-after': '1' } }),
      errorAnswer({ status: 202, code: 'OUTCOME_PENDING', extensions: { retryAfterSeconds: 1 } }),
      paymentAnswer('k'),
    ]);
    const reports: AttemptReport[] = [];
    await clientOver(script, { onAttempt: (r) => reports.push(r) }).createPayment(INPUT);
    const [first, second, third] = script.sent.map((r) => r.at);
    expect(second! - first!).toBeGreaterThanOrEqual(1_000);
    expect(third! - second!).toBeGreaterThanOrEqual(1_000);
    expect(reports.map((r) => [r.outcome, r.delayMs])).toEqual([
      ['retrying', 1_000],
      ['retrying', 1_000],
      ['succeeded', undefined],
    ]);
  });

  it('backs off between lost answers, within the jitter bounds', async () => {
    const script = scriptedFetch([{ fail: 'network' }, { fail: 'network' }, paymentAnswer('k')]);
    const reports: AttemptReport[] = [];
    await clientOver(script, {
      backoff: { baseMs: 100, capMs: 1_000 },
      random: () => 0.999,
      onAttempt: (r) => reports.push(r),
    }).createPayment(INPUT);
    // Ceilings 100 then 200 ms; a draw near the top of each.
    expect(reports.map((r) => r.delayMs)).toEqual([99, 199, undefined]);
    expect(script.sent[1]!.at - script.sent[0]!.at).toBeGreaterThanOrEqual(99);
    expect(script.sent[2]!.at - script.sent[1]!.at).toBeGreaterThanOrEqual(199);
  });
});

describe('timeoutMs', () => {
  it('ends a call whose gateway never answers, at its deadline', async () => {
    const script = scriptedFetch([{ hang: true }]);
    const started = Date.now();
    const error = await failureOf(
      clientOver(script, { timeoutMs: 400, attemptTimeoutMs: 150 }).createPayment(INPUT),
    );
    const elapsed = Date.now() - started;
    expect(error).toMatchObject({ code: 'TIMEOUT', retryable: true, httpStatus: null });
    expect(elapsed).toBeGreaterThanOrEqual(380);
    expect(elapsed).toBeLessThan(1_000);
    expect(error.attempts).toBeGreaterThanOrEqual(2);
    // No attempt started past the deadline.
    for (const request of script.sent) expect(request.at - started).toBeLessThan(400);
  });

  it('does not sleep past its deadline: a longer Retry-After ends the call at once', async () => {
    const script = scriptedFetch([
      errorAnswer({
        status: 202,
        code: 'OUTCOME_PENDING',
        headers: { 'retry-after': '30' },
        extensions: { paymentId: 'pay_p' },
      }),
      paymentAnswer('k'),
    ]);
    const started = Date.now();
    const error = await failureOf(clientOver(script, { timeoutMs: 2_000 }).createPayment(INPUT));
    expect(Date.now() - started).toBeLessThan(500);
    expect(script.sent).toHaveLength(1);
    expect(error).toMatchObject({
      code: 'OUTCOME_PENDING',
      retryable: true,
      paymentId: 'pay_p',
      retryAfterSeconds: 30,
    });
  });

  it('ends a call at once when the caller aborts, in an attempt or in a wait', async () => {
    const hanging = scriptedFetch([{ hang: true }]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const inAttempt = await failureOf(
      clientOver(hanging).createPayment(INPUT, { signal: controller.signal }),
    );
    expect(inAttempt).toMatchObject({ code: 'ABORTED', retryable: true, attempts: 1 });

    const waiting = scriptedFetch([
      errorAnswer({ status: 409, code: 'IDEMPOTENCY_KEY_IN_USE', headers: { 'retry-after': '5' } }),
    ]);
    const later = new AbortController();
    setTimeout(() => later.abort(), 100);
    const started = Date.now();
    const inWait = await failureOf(
      clientOver(waiting).createPayment(INPUT, { signal: later.signal }),
    );
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(inWait).toMatchObject({ code: 'ABORTED', retryable: true, attempts: 1 });
  });
});

describe('reads', () => {
  const payment = { status: 200, body: { data: { payment: { id: 'pay_1' } } } } as const;

  it('retry a lost answer, a 5xx and RATE_LIMITED', async () => {
    const script = scriptedFetch([
      { fail: 'network' },
      { status: 503, body: 'unavailable' },
      errorAnswer({ status: 429, code: 'RATE_LIMITED', headers: { 'retry-after': '0' } }),
      payment,
    ]);
    expect(await clientOver(script).payment('pay_1')).toEqual({ id: 'pay_1' });
    expect(script.sent).toHaveLength(4);
    expect(script.sent.map((r) => r.body.operationName)).toEqual(Array(4).fill('Payment'));
  });

  it.each<[string, Step]>([
    ['BAD_USER_INPUT', errorAnswer({ status: 400, code: 'BAD_USER_INPUT' })],
    ['UNAUTHENTICATED', errorAnswer({ status: 401, code: 'UNAUTHENTICATED' })],
    ['IDEMPOTENCY_KEY_IN_USE', errorAnswer({ status: 409, code: 'IDEMPOTENCY_KEY_IN_USE' })],
  ])('do not retry %s', async (code, step) => {
    const script = scriptedFetch([step, payment]);
    const error = await failureOf(clientOver(script).payment('pay_1'));
    expect(error).toMatchObject({ code, attempts: 1, retryable: false });
    expect(error.idempotencyKey).toBeUndefined();
  });
});

describe('answers it cannot read', () => {
  it('are final when they came with a 2xx, and name what was missing', async () => {
    const script = scriptedFetch([{ status: 200, body: { data: { somethingElse: {} } } }]);
    const error = await failureOf(clientOver(script).createPayment(INPUT));
    expect(error).toMatchObject({ code: 'BAD_RESPONSE', retryable: false, attempts: 1 });
    expect(error.message).toContain('createPayment');
  });

  it('refuse bad options before anything is sent', () => {
    const script = scriptedFetch([paymentAnswer('k')]);
    for (const options of [
      { url: 'ftp://x' },
      { apiKey: '' },
      { maxAttempts: 0 },
      { timeoutMs: -1 },
      { preferWaitSeconds: 11 },
      { backoff: { baseMs: 10, capMs: 1 } },
    ]) {
      expect(() => clientOver(script, options), JSON.stringify(options)).toThrow(PaymentsApiError);
    }
    expect(script.sent).toHaveLength(0);
  });

  it('refuse an operationId without a keyStore', async () => {
    const script = scriptedFetch([paymentAnswer('k')]);
    const error = await failureOf(clientOver(script).createPayment(INPUT, { operationId: 'x' }));
    expect(error).toMatchObject({ code: 'INVALID_REQUEST', attempts: 0 });
    expect(script.sent).toHaveLength(0);
  });
});
