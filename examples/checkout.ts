/**
 * A merchant's checkout on the SDK, against a running gateway:
 *
 *   npm start                                                  # one terminal
 *   PAYMENTS_API_KEY=$(cat .data/demo-api-key) npx tsx examples/checkout.ts
 *
 * PAYMENTS_GATEWAY_URL defaults to the GraphQL URL `npm start` prints (`PORT=0 npm start`
 * prints another). Each call's key is kept in .data/checkout-keys/ under the order's operation
 * id until the call's answer is final: stop this script mid-call (or lose the network) and run
 * it again with the same ORDER_ID, and it resumes with the same keys — one charge, whatever
 * happened in between. Once final, a key is forgotten: a later run with the same ORDER_ID is a
 * new order. (To make any rerun replay instead, derive `idempotencyKey` from the order.)
 *
 * The balance it prints includes this order's capture and refund: the ledger posts them a moment
 * after they happen, so it waits (a while at most) until the balance is as of the refund.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  createPaymentsClient,
  PaymentsApiError,
  type Balance,
  type PaymentsClient,
} from '@payments-gateway/client';
import { createFileKeyStore } from '@payments-gateway/client/file-key-store';

/**
 * How long to wait for the ledger to post this order's movements: it posts from the event log
 * within a second or two (ADR 0026); a ledger that far behind is worth printing as it is.
 */
const LEDGER_WAIT_MS = 10_000;
/** Between two reads of the balance while waiting: a few reads a second is plenty. */
const BALANCE_POLL_MS = 250;

/** The currency's balance once it is as of `instant` (asOf ≥ it), or as it is after the wait. */
async function balanceAsOf(
  payments: PaymentsClient,
  want: { currency: string; instant: string },
): Promise<{ balance: Balance | undefined; current: boolean }> {
  const deadline = Date.now() + LEDGER_WAIT_MS;
  for (;;) {
    const balance = (await payments.balances()).find((b) => b.currency === want.currency);
    const current = balance !== undefined && Date.parse(balance.asOf) >= Date.parse(want.instant);
    if (current || Date.now() >= deadline) return { balance, current };
    await sleep(BALANCE_POLL_MS);
  }
}

const url = process.env['PAYMENTS_GATEWAY_URL'] ?? 'http://127.0.0.1:4000/graphql';
const apiKey = process.env['PAYMENTS_API_KEY'];
if (apiKey === undefined || apiKey === '') {
  console.error('set PAYMENTS_API_KEY, e.g. PAYMENTS_API_KEY=$(cat .data/demo-api-key)');
  process.exit(2);
}
// Base 36: a decimal millisecond timestamp is 13 digits, which the card-number screen refuses
// one time in ten (docs/api.md §1.4).
const order = process.env['ORDER_ID'] ?? `order-${Date.now().toString(36)}`;

const client = createPaymentsClient({
  url,
  apiKey,
  keyStore: createFileKeyStore({ directory: '.data/checkout-keys' }),
  onAttempt: (attempt) => {
    if (attempt.outcome !== 'succeeded') {
      console.log(`  ${attempt.operationName} attempt ${attempt.attempt}: ${attempt.code}`);
    }
  },
});

try {
  // Authorise now, capture when the goods ship: one key per step, each kept under its own
  // operation id until the gateway's answer is final.
  const created = await client.createPayment(
    {
      amount: '10.50',
      currency: 'EUR',
      paymentMethod: 'pm_card_visa',
      captureMethod: 'MANUAL',
      reference: order,
    },
    { operationId: `${order}/authorise` },
  );
  const paymentId = created.payment.id;
  console.log(
    `${order}: payment ${paymentId} ${created.payment.status}` +
      (created.idempotency.replayed ? ' (the answer to an earlier run)' : ''),
  );
  const captured = await client.capturePayment(
    { paymentId, amount: '10.50' },
    { operationId: `${order}/capture` },
  );
  console.log(`captured ${captured.payment.amountCaptured} ${captured.payment.currency}`);
  const refunded = await client.refundPayment(
    { paymentId, amount: '2.50', reason: 'one item returned' },
    { operationId: `${order}/refund` },
  );
  console.log(`refunded ${refunded.refund.amount}: ${refunded.refund.status}`);

  const page = await client.payments({ reference: order, first: 5 });
  console.log(`payments with reference ${order}: ${page.edges.length}`);
  // As of the refund, the payment's latest change: the balance includes the capture too.
  const { currency, updatedAt } = refunded.payment;
  const { balance, current } = await balanceAsOf(client, { currency, instant: updatedAt });
  if (balance !== undefined) {
    console.log(
      `balance ${currency}: ${balance.available} as of ${balance.asOf}` +
        (current ? '' : ` (the ledger is behind; ${balance.pending} not posted yet)`),
    );
  }
} catch (error) {
  if (!(error instanceof PaymentsApiError)) throw error;
  // Branch on the code and on retryable, never on the message.
  if (error.retryable) {
    console.error(
      `${error.code}: not final yet (${error.attempts} attempts). Run again with ORDER_ID=${order} ` +
        `to resume with the same keys${error.paymentId ? `; payment ${error.paymentId}` : ''}.`,
    );
  } else {
    console.error(`${error.code} (HTTP ${error.httpStatus}): ${error.message}`);
  }
  console.error(`request ids, for the gateway's logs: ${error.requestIds.join(', ')}`);
  process.exitCode = 1;
}
