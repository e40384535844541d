import { describe, expect, it } from 'vitest';
import type { JsonValue } from '../../lib/canonical-json.ts';
import { answerAssociatedData, openStoredAnswer } from '../../lib/idempotency/stored-answer.ts';
import { PAYMENT_ANSWER_VERSION } from '../../services/payments/stored-answers.ts';
import { useTestDatabase } from '../support/test-database.ts';
import { errorCodeOf, graphql, type GraphQLAnswer } from '../support/graphql-client.ts';
import { paymentInput, TENANT_A, type TestStack, useTestStackOn } from '../support/test-stack.ts';

const database = useTestDatabase('stored-answers');
const stack = useTestStackOn(database);
/** A second gateway on the same database whose size cap every payment answer exceeds. */
const capped = useTestStackOn(database, { app: { answerMaxBytes: 256 } });

// Its own documents: the capped stack answers at most 256 bytes, so what these select is the
// test's subject (an answer under and over the cap), not a detail a shared document may change.
const CREATE = `
mutation Create($input: CreatePaymentInput!) {
  createPayment(input: $input) {
    payment { id status amount captureMethod amountCaptured refunds { id amount } }
    idempotency { replayed expiresAt }
  }
}`;

const CAPTURE = `
mutation Capture($input: CapturePaymentInput!) {
  capturePayment(input: $input) {
    payment { id status captureMethod amountCaptured }
    idempotency { replayed }
  }
}`;

const REFUND = `
mutation Refund($input: RefundPaymentInput!) {
  refundPayment(input: $input) {
    payment { id status amountRefunded refunds { id amount } }
    refund { id amount status }
    idempotency { replayed }
  }
}`;

function send(on: TestStack, query: string, input: Record<string, unknown>) {
  return graphql(on.app.url, { apiKey: TENANT_A.apiKey, query, variables: { input } });
}

function payload(answer: GraphQLAnswer, field: string): Record<string, unknown> {
  const data = answer.body.data?.[field] as Record<string, unknown> | undefined;
  if (data === undefined) {
    const causes = [...stack.errors, ...capped.errors].map(String).join('\n');
    throw new Error(`no ${field}: ${JSON.stringify(answer.body)}\n${causes}`);
  }
  return data;
}

function withoutReplayMarker(data: Record<string, unknown>) {
  const { idempotency, ...rest } = data as { idempotency: Record<string, unknown> };
  return { ...rest, expiresAt: idempotency['expiresAt'] };
}

interface StoredRow {
  version: number;
  stored_as: string;
  /** The answer as stored: a binary envelope, or in body for a row written before 0026. */
  sealed: Buffer | null;
  body: JsonValue | null;
  tenant_id: string;
  operation: string;
}

async function storedRowOf(key: string): Promise<StoredRow | undefined> {
  const { rows } = await stack.db.query<StoredRow>(
    `SELECT r.version, r.stored_as, r.sealed, r.body, k.tenant_id, k.operation
       FROM idempotency_keys k JOIN idempotency_responses r ON r.request_id = k.id
      WHERE k.key = $1`,
    [key],
  );
  return rows[0];
}

/** The stored answer of a key, its body opened (answers are sealed at rest). */
async function storedAnswerOf(key: string) {
  const row = await storedRowOf(key);
  if (row === undefined) return undefined;
  const scope = { tenantId: row.tenant_id, operation: { id: row.operation }, key };
  const { keyring } = stack.app.services.deps;
  const stored = row.sealed ?? row.body;
  const body = stored === null ? null : openStoredAnswer(keyring, scope, stored);
  return { version: row.version, stored_as: row.stored_as, body };
}

/** The payment fields each answer version added: an answer of version n has none of n + 1's. */
const FIELDS_ADDED_IN: Record<number, string[]> = {
  2: ['captureMethod'],
  3: ['description', 'metadata', 'version', 'updatedAt'],
};

/**
 * Rewrites a stored answer as the release of answer version `version` wrote it: without the
 * payment fields added since, sealed as this one reads it.
 */
async function downgradeTo(version: number, key: string): Promise<void> {
  const row = await storedRowOf(key);
  const stored = await storedAnswerOf(key);
  const { payment, ...rest } = stored?.body as { payment: Record<string, unknown> };
  const later = Object.entries(FIELDS_ADDED_IN).filter(([added]) => Number(added) > version);
  const dropped = new Set(later.flatMap(([, fields]) => fields));
  const older = Object.fromEntries(Object.entries(payment).filter(([name]) => !dropped.has(name)));
  const scope = { tenantId: row!.tenant_id, operation: { id: row!.operation }, key };
  const sealed = stack.app.services.deps.keyring.sealBinary(
    JSON.stringify({ ...rest, payment: older }),
    answerAssociatedData(scope),
  );
  const { rowCount } = await stack.db.query(
    `UPDATE idempotency_responses r SET version = $3, sealed = $2
       FROM idempotency_keys k WHERE k.key = $1 AND r.request_id = k.id`,
    [key, sealed, version],
  );
  expect(rowCount).toBe(1);
}

describe('an answer stored in an older shape (v1, before payments had captureMethod)', () => {
  const downgradeToV1 = (key: string) => downgradeTo(1, key);

  it('is upgraded on replay to the answer the first request would get today', async () => {
    const input = paymentInput('v1-create', { captureMethod: 'MANUAL' });
    const first = payload(await send(stack, CREATE, input), 'createPayment');
    expect(await storedAnswerOf('v1-create')).toMatchObject({
      version: PAYMENT_ANSWER_VERSION,
      stored_as: 'inline',
    });
    await downgradeToV1('v1-create');
    expect(
      (await storedAnswerOf('v1-create'))?.body as { payment: Record<string, unknown> },
    ).not.toHaveProperty('payment.captureMethod');

    const replay = payload(await send(stack, CREATE, input), 'createPayment');
    expect(replay['idempotency']).toMatchObject({ replayed: true });
    expect(withoutReplayMarker(replay)).toEqual(withoutReplayMarker(first));
    expect(replay['payment']).toMatchObject({
      captureMethod: 'MANUAL',
      status: 'REQUIRES_CAPTURE',
    });
  });

  it('upgrades a capture answer too, and leaves a stored refusal as it was', async () => {
    const created = payload(
      await send(stack, CREATE, paymentInput('v1-cap-pay', { captureMethod: 'MANUAL' })),
      'createPayment',
    );
    const paymentId = (created['payment'] as { id: string }).id;
    const capture = { idempotencyKey: 'v1-cap', paymentId };
    const first = payload(await send(stack, CAPTURE, capture), 'capturePayment');
    await downgradeToV1('v1-cap');
    const replay = payload(await send(stack, CAPTURE, capture), 'capturePayment');
    expect(replay['payment']).toEqual(first['payment']);

    // A second capture of the same payment is refused at admission; the refusal is stored.
    const refused = await send(stack, CAPTURE, { idempotencyKey: 'v1-cap-again', paymentId });
    const code = errorCodeOf(refused);
    expect(code).toBeDefined();
    await stack.db.query(
      `UPDATE idempotency_responses r SET version = 1
         FROM idempotency_keys k WHERE k.key = 'v1-cap-again' AND r.request_id = k.id`,
    );
    expect(
      errorCodeOf(await send(stack, CAPTURE, { idempotencyKey: 'v1-cap-again', paymentId })),
    ).toBe(code);
  });

  it('refuses an answer newer than the code (a rollback) instead of misreading it', async () => {
    const newer = PAYMENT_ANSWER_VERSION + 1;
    const input = paymentInput('newer-create');
    await send(stack, CREATE, input);
    await stack.db.query(
      `UPDATE idempotency_responses r SET version = $1
         FROM idempotency_keys k WHERE k.key = 'newer-create' AND r.request_id = k.id`,
      [newer],
    );
    const replay = await send(stack, CREATE, input);
    expect(errorCodeOf(replay)).toBe('INTERNAL_SERVER_ERROR');
    expect(await storedAnswerOf('newer-create')).toMatchObject({ version: newer }); // not rewritten
  });
});

describe('an answer stored in v2 (before payments had description, metadata, version, updatedAt)', () => {
  /** Every field of Payment: a replay of an older answer must answer each one. */
  const EVERY_FIELD = `
    id status amount currency amountCaptured amountRefunded paymentMethod captureMethod
    reference providerReference failureCode createdAt refunds { id amount status }
    description metadata version updatedAt`;
  const CREATE_ALL = `
  mutation Create($input: CreatePaymentInput!) {
    createPayment(input: $input) {
      payment { ${EVERY_FIELD} }
      idempotency { replayed firstRequestAt }
    }
  }`;
  const CAPTURE_ALL = `
  mutation Capture($input: CapturePaymentInput!) {
    capturePayment(input: $input) {
      payment { ${EVERY_FIELD} }
      idempotency { replayed firstRequestAt }
    }
  }`;
  const metadata = { order: 'v2-1', lines: [{ sku: 'A-1', qty: 2 }], gift: false };
  type Payment = Record<string, unknown>;

  it('replays every field: as sent from the payment, version 0 and its request as updatedAt', async () => {
    const input = paymentInput('v2-create', {
      captureMethod: 'MANUAL',
      description: 'two mugs',
      metadata,
    });
    const first = payload(await send(stack, CREATE_ALL, input), 'createPayment');
    expect(first['payment']).toMatchObject({ description: 'two mugs', metadata, version: 2 });
    await downgradeTo(2, 'v2-create');
    const stored = (await storedAnswerOf('v2-create'))?.body as { payment: object };
    for (const field of FIELDS_ADDED_IN[3]!) expect(stored.payment).not.toHaveProperty(field);

    const replay = payload(await send(stack, CREATE_ALL, input), 'createPayment');
    const idempotency = replay['idempotency'] as { replayed: boolean; firstRequestAt: string };
    expect(idempotency.replayed).toBe(true);
    const { version: _v, updatedAt: _u, ...unchanged } = first['payment'] as Payment;
    expect(replay['payment']).toEqual({
      ...unchanged,
      version: 0,
      updatedAt: idempotency.firstRequestAt,
    });
  });

  it('a capture answer too: version 0 is older than every answer stored since', async () => {
    const created = payload(
      await send(stack, CREATE_ALL, paymentInput('v2-cap-pay', { captureMethod: 'MANUAL' })),
      'createPayment',
    );
    const paymentId = (created['payment'] as { id: string }).id;
    const capture = { idempotencyKey: 'v2-cap', paymentId };
    const first = payload(await send(stack, CAPTURE_ALL, capture), 'capturePayment');
    await downgradeTo(2, 'v2-cap');
    const replay = payload(await send(stack, CAPTURE_ALL, capture), 'capturePayment');
    const firstPayment = first['payment'] as { version: number; status: string };
    const replayed = replay['payment'] as { version: number; status: string; updatedAt: string };
    expect(replayed).toMatchObject({ status: 'SUCCEEDED', version: 0 });
    expect(replayed.updatedAt).toBe(
      (replay['idempotency'] as { firstRequestAt: string }).firstRequestAt,
    );
    expect(replayed.version).toBeLessThan((created['payment'] as { version: number }).version);
    expect(firstPayment.version).toBeGreaterThan(replayed.version);
  });
});

describe('an answer over the size cap', () => {
  it('is stored as a reference to its resource and replayed from it', async () => {
    const input = paymentInput('cap-create');
    const first = payload(await send(capped, CREATE, input), 'createPayment');
    expect(await storedAnswerOf('cap-create')).toEqual({
      version: PAYMENT_ANSWER_VERSION,
      stored_as: 'reference',
      body: null,
    });
    const replay = payload(await send(capped, CREATE, input), 'createPayment');
    expect(replay['idempotency']).toMatchObject({ replayed: true });
    expect(withoutReplayMarker(replay)).toEqual(withoutReplayMarker(first));
  });

  it('replays the resource as it is now: a reference is not a snapshot', async () => {
    const created = payload(
      await send(capped, CREATE, paymentInput('cap-ref-pay')),
      'createPayment',
    );
    const paymentId = (created['payment'] as { id: string }).id;
    const refund = { idempotencyKey: 'cap-refund', paymentId, amount: '2.00' };
    const first = payload(await send(capped, REFUND, refund), 'refundPayment');
    expect(await storedAnswerOf('cap-refund')).toMatchObject({ stored_as: 'reference' });
    await send(capped, REFUND, { idempotencyKey: 'cap-refund-2', paymentId, amount: '3.00' });

    const replay = payload(await send(capped, REFUND, refund), 'refundPayment');
    expect(replay['refund']).toEqual(first['refund']); // the refund this key made, unchanged
    expect(replay['payment']).toMatchObject({ amountRefunded: '5.00' }); // the payment today
  });

  it('stays inline under the cap (the default gateway stores the same answer whole)', async () => {
    await send(stack, CREATE, paymentInput('cap-inline'));
    const stored = await storedAnswerOf('cap-inline');
    expect(stored).toMatchObject({ version: PAYMENT_ANSWER_VERSION, stored_as: 'inline' });
    expect(Buffer.byteLength(JSON.stringify(stored?.body))).toBeGreaterThan(256);
  });
});
