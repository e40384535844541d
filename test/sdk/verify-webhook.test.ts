/**
 * verifyWebhook (packages/client/src/webhooks.ts) against two signers: the gateway's own
 * (services/notifications/webhook-signature.ts, as delivery-handlers.ts uses it, one signature
 * per live secret) and the `standardwebhooks` package as an independent reference, in both
 * directions. Then every way a delivery must be refused, each with its code.
 * test/sdk/webhooks-against-gateway.test.ts verifies real deliveries from a running gateway.
 */
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  verifyWebhook,
  WebhookVerificationError,
  type WebhookHeaders,
} from '../../packages/client/src/webhooks.ts';
import {
  generateWebhookSecret,
  signWebhook,
} from '../../services/notifications/webhook-signature.ts';

const NOW_SECONDS = 1_760_000_000;
const NOW = NOW_SECONDS * 1000;
const ID = 'evt_payment_0192f0c4-5e7a-7000-8000-000000000001_succeeded';

/** A delivery as delivery-handlers.ts builds it: its body, and its headers under `secrets`. */
function delivery(input: { secrets: string[]; timestamp?: number; body?: string }) {
  const timestamp = input.timestamp ?? NOW_SECONDS;
  const body =
    input.body ??
    JSON.stringify({
      type: 'payment.succeeded',
      timestamp: new Date(timestamp * 1000).toISOString(),
      data: { payment: { id: 'pay_1', status: 'SUCCEEDED', amount: '10.50' }, movement: null },
    });
  const headers = {
    'content-type': 'application/json',
    'webhook-id': ID,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': input.secrets
      .map((secret) => signWebhook({ secret, id: ID, timestamp, body }))
      .join(' '),
  };
  return { body, headers };
}

function refusal(verify: () => unknown): WebhookVerificationError {
  try {
    verify();
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error;
    throw error;
  }
  throw new Error('expected a WebhookVerificationError, and it verified');
}

describe('verifyWebhook accepts what the gateway sends', () => {
  const secret = generateWebhookSecret();

  it('returns the event with its webhook-id', () => {
    const { body, headers } = delivery({ secrets: [secret] });
    const event = verifyWebhook(body, headers, { secret, now: NOW });
    expect(event).toEqual({
      id: ID,
      type: 'payment.succeeded',
      timestamp: new Date(NOW).toISOString(),
      data: { payment: { id: 'pay_1', status: 'SUCCEEDED', amount: '10.50' }, movement: null },
    });
  });

  it('takes the body as a Buffer or bytes, and headers as a fetch Headers or in any case', () => {
    const { body, headers } = delivery({ secrets: [secret] });
    const upper = Object.fromEntries(
      Object.entries(headers).map(([name, value]) => [name.toUpperCase(), value]),
    );
    const inputs: Array<[string | Uint8Array, WebhookHeaders]> = [
      [Buffer.from(body), headers],
      [new TextEncoder().encode(body), new Headers(headers)],
      [body, upper],
      // A header as an array, as some frameworks' header maps hold them.
      [body, { ...headers, 'webhook-signature': [headers['webhook-signature']] }],
    ];
    for (const [payload, given] of inputs) {
      expect(verifyWebhook(payload, given, { secret, now: NOW }).id).toBe(ID);
    }
  });

  it('accepts a body with characters beyond ASCII, signed as UTF-8 bytes', () => {
    const body = JSON.stringify({
      type: 'payment.failed',
      timestamp: 'x',
      data: { ref: 'Café ☕' },
    });
    const { headers } = delivery({ secrets: [secret], body });
    expect(verifyWebhook(Buffer.from(body), headers, { secret, now: NOW }).data).toEqual({
      ref: 'Café ☕',
    });
  });

  it('agrees with the standardwebhooks package, both ways', () => {
    const reference = new Webhook(secret);
    const body = JSON.stringify({ type: 'refund.succeeded', timestamp: 't', data: {} });
    // Signed by the reference, verified by the SDK.
    const signature = reference.sign(ID, new Date(NOW), body);
    const headers = {
      'webhook-id': ID,
      'webhook-timestamp': String(NOW_SECONDS),
      'webhook-signature': signature,
    };
    expect(verifyWebhook(body, headers, { secret, now: NOW }).type).toBe('refund.succeeded');
    // Signed by the gateway, verified by the reference and the SDK alike (at the real now).
    const live = delivery({ secrets: [secret], timestamp: Math.floor(Date.now() / 1000) });
    expect(reference.verify(live.body, live.headers)).toMatchObject({ type: 'payment.succeeded' });
    expect(verifyWebhook(live.body, live.headers, secret).type).toBe('payment.succeeded');
    // The signatures are the same bytes.
    expect(signWebhook({ secret, id: ID, timestamp: NOW_SECONDS, body })).toBe(signature);
  });

  it('uses a 5-minute window by default, either way, and takes another', () => {
    const { body, headers } = delivery({ secrets: [secret] });
    expect(verifyWebhook(body, headers, { secret, now: NOW + 300_000 }).id).toBe(ID);
    expect(verifyWebhook(body, headers, { secret, now: NOW - 300_000 }).id).toBe(ID);
    expect(refusal(() => verifyWebhook(body, headers, { secret, now: NOW + 301_000 })).code).toBe(
      'TIMESTAMP_TOO_OLD',
    );
    expect(
      refusal(() =>
        verifyWebhook(body, headers, { secret, now: NOW + 61_000, toleranceSeconds: 60 }),
      ).code,
    ).toBe('TIMESTAMP_TOO_OLD');
  });
});

describe('a rotation: every delivery is signed under the new and the replaced secret', () => {
  const replaced = generateWebhookSecret();
  const current = generateWebhookSecret();
  const { body, headers } = delivery({ secrets: [current, replaced] });

  it('verifies under either secret alone, or a list of both', () => {
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    for (const secret of [current, replaced, [replaced, current], [current]]) {
      expect(verifyWebhook(body, headers, { secret, now: NOW }).id).toBe(ID);
    }
  });

  it('a receiver that has moved to the new secret still verifies old-secret deliveries it keeps a list for', () => {
    const old = delivery({ secrets: [replaced] });
    expect(verifyWebhook(old.body, old.headers, { secret: [current, replaced], now: NOW }).id).toBe(
      ID,
    );
    expect(
      refusal(() => verifyWebhook(old.body, old.headers, { secret: current, now: NOW })).code,
    ).toBe('INVALID_SIGNATURE');
  });

  it('refuses a secret that is neither', () => {
    const other = generateWebhookSecret();
    expect(refusal(() => verifyWebhook(body, headers, { secret: [other], now: NOW })).code).toBe(
      'INVALID_SIGNATURE',
    );
  });

  it('reads signatures sent in two headers, which Node and fetch join with ", "', () => {
    const [first, second] = headers['webhook-signature'].split(' ');
    const twice = new Headers({ 'webhook-id': ID, 'webhook-timestamp': String(NOW_SECONDS) });
    twice.append('webhook-signature', first!);
    twice.append('webhook-signature', second!);
    expect(twice.get('webhook-signature')).toBe(`${first}, ${second}`);
    for (const secret of [current, replaced]) {
      expect(verifyWebhook(body, twice, { secret, now: NOW }).id).toBe(ID);
    }
  });

  it('skips signatures of other schemes (v1a) and malformed entries', () => {
    const mixed = {
      ...headers,
      'webhook-signature': `v1a,AAAA garbage ${headers['webhook-signature']}`,
    };
    expect(verifyWebhook(body, mixed, { secret: current, now: NOW }).id).toBe(ID);
  });
});

describe('verifyWebhook refuses', () => {
  const secret = generateWebhookSecret();
  const { body, headers } = delivery({ secrets: [secret] });

  it.each([
    [
      'a tampered payload',
      () => verifyWebhook(body.replace('10.50', '1050.00'), headers, { secret, now: NOW }),
      'INVALID_SIGNATURE',
    ],
    [
      'a wrong secret',
      () => verifyWebhook(body, headers, { secret: generateWebhookSecret(), now: NOW }),
      'INVALID_SIGNATURE',
    ],
    [
      'another webhook-id',
      () => verifyWebhook(body, { ...headers, 'webhook-id': 'evt_other' }, { secret, now: NOW }),
      'INVALID_SIGNATURE',
    ],
    [
      'a changed timestamp',
      () =>
        verifyWebhook(
          body,
          { ...headers, 'webhook-timestamp': String(NOW_SECONDS + 1) },
          { secret, now: NOW },
        ),
      'INVALID_SIGNATURE',
    ],
    [
      'a stale timestamp',
      () => verifyWebhook(body, headers, { secret, now: NOW + 10 * 60_000 }),
      'TIMESTAMP_TOO_OLD',
    ],
    [
      'a timestamp from the future',
      () => verifyWebhook(body, headers, { secret, now: NOW - 10 * 60_000 }),
      'TIMESTAMP_TOO_NEW',
    ],
    [
      'a timestamp in milliseconds',
      () => verifyWebhook(body, { ...headers, 'webhook-timestamp': 'soon' }, { secret, now: NOW }),
      'INVALID_TIMESTAMP',
    ],
    [
      'no webhook-id',
      () => verifyWebhook(body, { ...headers, 'webhook-id': undefined }, { secret, now: NOW }),
      'MISSING_HEADER',
    ],
    [
      'no webhook-timestamp',
      () =>
        verifyWebhook(
          body,
          { 'webhook-id': ID, 'webhook-signature': headers['webhook-signature'] },
          { secret, now: NOW },
        ),
      'MISSING_HEADER',
    ],
    [
      'an empty webhook-signature',
      () => verifyWebhook(body, { ...headers, 'webhook-signature': ' ' }, { secret, now: NOW }),
      'MISSING_HEADER',
    ],
    [
      'a signature without its scheme',
      () =>
        verifyWebhook(
          body,
          { ...headers, 'webhook-signature': headers['webhook-signature'].slice(3) },
          { secret, now: NOW },
        ),
      'INVALID_SIGNATURE',
    ],
    [
      'a secret without whsec_',
      () => verifyWebhook(body, headers, { secret: secret.slice('whsec_'.length), now: NOW }),
      'INVALID_SECRET',
    ],
    [
      'a secret that is not base64',
      () => verifyWebhook(body, headers, { secret: 'whsec_not base64!', now: NOW }),
      'INVALID_SECRET',
    ],
    [
      'an empty list of secrets',
      () => verifyWebhook(body, headers, { secret: [], now: NOW }),
      'INVALID_SECRET',
    ],
    [
      'a parsed body',
      () => verifyWebhook(JSON.parse(body) as string, headers, { secret, now: NOW }),
      'INVALID_PAYLOAD',
    ],
  ] as const)('%s', (_, verify, code) => {
    const error = refusal(verify);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ name: 'WebhookVerificationError', code });
  });

  it('a missing secret, from JavaScript that passed none', () => {
    const none = undefined as unknown as string;
    expect(refusal(() => verifyWebhook(body, headers, none)).code).toBe('INVALID_SECRET');
    expect(refusal(() => verifyWebhook(body, headers, { secret: none, now: NOW })).code).toBe(
      'INVALID_SECRET',
    );
  });

  it('a signed body that is not a JSON object', () => {
    const signed = delivery({ secrets: [secret], body: 'not json' });
    expect(
      refusal(() => verifyWebhook(signed.body, signed.headers, { secret, now: NOW })).code,
    ).toBe('INVALID_PAYLOAD');
  });

  it('checks the timestamp before the signature: a stale replay is stale, whatever it carries', () => {
    const error = refusal(() => verifyWebhook('{}', headers, { secret, now: NOW + 3_600_000 }));
    expect(error.code).toBe('TIMESTAMP_TOO_OLD');
  });
});
