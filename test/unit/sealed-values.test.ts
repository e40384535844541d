import { describe, expect, it } from 'vitest';
import { associatedData, binaryEnvelopeKeyId, envelopeKeyId } from '../../lib/crypto/envelope.ts';
import { Keyring } from '../../lib/crypto/keyring.ts';
import { CiphertextRejectedError, DataKeyUnknownError } from '../../lib/errors.ts';
import {
  keyedRequestHash,
  requestHash,
  requestHashMatches,
} from '../../lib/idempotency/request-hash.ts';
import {
  openWebhookSecret,
  sealWebhookSecret,
} from '../../services/notifications/webhook-secret.ts';
import { CREATE_PAYMENT } from '../../services/payments/create-payment.flow.ts';

/** Synthetic keys: fixed bytes, obviously not real. */
const KEY_A = `a:${Buffer.alloc(32, 0xa1).toString('base64')}`;
const KEY_B = `b:${Buffer.alloc(32, 0xb2).toString('base64')}`;
const AAD = associatedData(['idempotency-response', 'tenant-1', 'payments.create.v1', 'k-1']);
const ANSWER = JSON.stringify({ payment: { id: 'p1', reference: 'order-77' } });

/** The envelope with one character of part `part` (0 id … 4 ciphertext) changed. */
function tampered(envelope: string, part: number): string {
  const parts = envelope.split('.');
  const target = parts[part + 1]!;
  const at = Math.floor(target.length / 2);
  const swapped = target[at] === 'A' ? 'B' : 'A';
  parts[part + 1] = `${target.slice(0, at)}${swapped}${target.slice(at + 1)}`;
  return parts.join('.');
}

describe('the v1 envelope (AES-256-GCM)', () => {
  const keyring = Keyring.parse(KEY_A);

  it('opens what it sealed, names its key, and never repeats a ciphertext', () => {
    const sealed = keyring.seal(ANSWER, AAD);
    expect(sealed).toMatch(/^v1\.a\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(envelopeKeyId(sealed)).toBe('a');
    expect(sealed).not.toContain('order-77');
    expect(keyring.open(sealed, AAD, 'an answer')).toBe(ANSWER);
    expect(keyring.seal(ANSWER, AAD)).not.toBe(sealed); // a fresh IV every time
  });

  it.each([
    ['iv', 1],
    ['tag', 2],
    ['ciphertext', 3],
  ])('refuses an envelope with a changed byte in its %s', (_, part) => {
    const sealed = keyring.seal(ANSWER, AAD);
    expect(() => keyring.open(tampered(sealed, part), AAD, 'an answer')).toThrow(
      CiphertextRejectedError,
    );
  });

  it('refuses a tag cut short, even one that is a prefix of the true tag', () => {
    // GCM accepts tags of 4 to 16 bytes unless told the length: a prefix of the true tag would
    // then verify, and a forger would need to guess 32 bits instead of 128.
    const sealed = keyring.seal(ANSWER, AAD);
    const parts = sealed.split('.');
    for (const bytes of [4, 8, 12]) {
      const tag = Buffer.from(parts[3]!, 'base64url').subarray(0, bytes).toString('base64url');
      const cut = [...parts.slice(0, 3), tag, parts[4]].join('.');
      expect(() => keyring.open(cut, AAD, 'an answer')).toThrow(CiphertextRejectedError);
    }
  });

  it('refuses a truncated envelope, and text that is no envelope at all', () => {
    const sealed = keyring.seal(ANSWER, AAD);
    expect(() => keyring.open(sealed.slice(0, -4), AAD, 'an answer')).toThrow(
      CiphertextRejectedError,
    );
    for (const text of [sealed.split('.').slice(0, 4).join('.'), 'v2.a.x.y.z', ANSWER]) {
      expect(() => keyring.open(text, AAD, 'an answer')).toThrow(CiphertextRejectedError);
    }
  });

  it('refuses other associated data: a ciphertext copied onto another row does not open', () => {
    const sealed = keyring.seal(ANSWER, AAD);
    for (const other of [
      ['idempotency-response', 'tenant-2', 'payments.create.v1', 'k-1'], // another tenant
      ['idempotency-response', 'tenant-1', 'payments.create.v1', 'k-2'], // another key
      ['idempotency-response', 'tenant-1', 'payments.refund.v1', 'k-1'], // another operation
      ['webhook-secret', 'tenant-1', 'payments.create.v1', 'k-1'], // another purpose
    ]) {
      expect(() => keyring.open(sealed, associatedData(other), 'an answer')).toThrow(
        CiphertextRejectedError,
      );
    }
  });

  it('refuses an envelope under a key it does not hold, naming that key', () => {
    const sealed = Keyring.parse(KEY_B).seal(ANSWER, AAD);
    expect(() => keyring.open(sealed, AAD, 'an answer')).toThrow(DataKeyUnknownError);
    expect(() => keyring.open(sealed, AAD, 'an answer')).toThrow(/data key "b"/);
  });

  it('refuses an envelope relabelled with another key id of the ring', () => {
    const both = Keyring.parse(`${KEY_B},${KEY_A}`);
    const sealed = both.seal(ANSWER, AAD); // under b
    expect(() => both.open(sealed.replace(/^v1\.b\./, 'v1.a.'), AAD, 'x')).toThrow(
      CiphertextRejectedError,
    );
  });

  it('seals under the first key and opens under any: a rotation keeps old values readable', () => {
    const old = keyring.seal(ANSWER, AAD);
    const rotated = Keyring.parse(`${KEY_B},${KEY_A}`);
    expect(envelopeKeyId(rotated.seal(ANSWER, AAD))).toBe('b');
    expect(rotated.open(old, AAD, 'an answer')).toBe(ANSWER);
  });
});

describe('the v1 envelope in binary form (ADR 0060)', () => {
  const keyring = Keyring.parse(KEY_A);
  /** Where each part starts in a binary envelope under key id `a`: 1 format, 1 length, 1 id. */
  const AT = { iv: 3, tag: 15, ciphertext: 31 };

  it('opens what it sealed, names its key, and is the text form without base64', () => {
    const sealed = keyring.sealBinary(ANSWER, AAD);
    expect([...sealed.subarray(0, 3)]).toEqual([1, 1, 'a'.charCodeAt(0)]);
    expect(binaryEnvelopeKeyId(sealed)).toBe('a');
    expect(sealed.toString('latin1')).not.toContain('order-77');
    expect(keyring.openBinary(sealed, AAD, 'an answer')).toBe(ANSWER);
    expect(sealed.length).toBe(AT.ciphertext + Buffer.byteLength(ANSWER));
    expect(sealed.length).toBeLessThan(keyring.seal(ANSWER, AAD).length * 0.8);
    expect(keyring.sealBinary(ANSWER, AAD).equals(sealed)).toBe(false); // a fresh IV every time
  });

  it.each(Object.entries(AT))('refuses a changed byte in its %s', (_, at) => {
    const sealed = keyring.sealBinary(ANSWER, AAD);
    sealed[at + 1] = sealed[at + 1]! ^ 0x01;
    expect(() => keyring.openBinary(sealed, AAD, 'an answer')).toThrow(CiphertextRejectedError);
  });

  it('refuses other associated data, a cut envelope, and bytes that are no envelope', () => {
    const sealed = keyring.sealBinary(ANSWER, AAD);
    const otherRow = associatedData([
      'idempotency-response',
      'tenant-2',
      'payments.create.v1',
      'k-1',
    ]);
    expect(() => keyring.openBinary(sealed, otherRow, 'x')).toThrow(CiphertextRejectedError);
    for (const bytes of [
      sealed.subarray(0, sealed.length - 1), // a byte short of its ciphertext
      sealed.subarray(0, AT.ciphertext - 1), // a tag cut short, no ciphertext
      Buffer.concat([Buffer.from([2]), sealed.subarray(1)]), // another format
      Buffer.from([1, 40, ...Buffer.from('a')]), // a key id longer than the bytes
      Buffer.concat([sealed.subarray(0, 2), Buffer.from([0xe1]), sealed.subarray(3)]), // 'a' | 0x80
      Buffer.from(ANSWER),
      Buffer.alloc(0),
    ]) {
      expect(() => keyring.openBinary(bytes, AAD, 'x')).toThrow(CiphertextRejectedError);
    }
  });

  it('refuses one under a key it does not hold by name, and one relabelled to another key', () => {
    const underB = Keyring.parse(KEY_B).sealBinary(ANSWER, AAD);
    expect(() => keyring.openBinary(underB, AAD, 'x')).toThrow(/data key "b"/);
    const both = Keyring.parse(`${KEY_B},${KEY_A}`);
    const relabelled = both.sealBinary(ANSWER, AAD);
    relabelled[2] = 'a'.charCodeAt(0);
    expect(() => both.openBinary(relabelled, AAD, 'x')).toThrow(CiphertextRejectedError);
  });
});

describe('DATA_ENCRYPTION_KEYS', () => {
  it.each([
    ['', /DATA_ENCRYPTION_KEYS is empty/],
    ['nocolon', /DATA_ENCRYPTION_KEYS: entry 1 must be id:base64key/],
    ['a.b:' + Buffer.alloc(32).toString('base64'), /DATA_ENCRYPTION_KEYS: entry 1/],
    ['a:' + Buffer.alloc(16).toString('base64'), /DATA_ENCRYPTION_KEYS: key "a" must be 32 bytes/],
    ['a:not*base64!', /DATA_ENCRYPTION_KEYS: key "a" must be 32 bytes/],
    [`${KEY_A},${KEY_A}`, /DATA_ENCRYPTION_KEYS: key id "a" appears twice/],
  ])('refuses %j with one line naming the variable', (raw, message) => {
    let thrown: unknown;
    try {
      Keyring.parse(raw);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(Error);
    expect((thrown as Error).message).toMatch(message);
    expect((thrown as Error).message).not.toContain('\n');
    expect((thrown as Error).message).not.toContain(Buffer.alloc(16).toString('base64'));
  });

  it('takes the first key as the one that seals', () => {
    expect(Keyring.parse(` ${KEY_B} , ${KEY_A} `).ids).toEqual(['b', 'a']);
    expect(Keyring.parse(`${KEY_B},${KEY_A}`).primaryId).toBe('b');
  });
});

describe('the keyed request hash', () => {
  const command = { amount: '10.00', currency: 'EUR', paymentMethod: 'pm_card_visa' };
  const request = { operation: CREATE_PAYMENT, command };

  it('is an HMAC named by its key, not the guessable plain SHA-256', () => {
    const hash = keyedRequestHash(Keyring.parse(KEY_A), CREATE_PAYMENT, command);
    expect(hash.keyId).toBe('a');
    expect(hash.digest).toHaveLength(32);
    expect(hash.digest.equals(requestHash(CREATE_PAYMENT, command))).toBe(false);
    const underB = keyedRequestHash(Keyring.parse(KEY_B), CREATE_PAYMENT, command);
    expect(underB.digest.equals(hash.digest)).toBe(false);
  });

  it('still means the same request after a rotation, by the key it names', () => {
    const hash = keyedRequestHash(Keyring.parse(KEY_A), CREATE_PAYMENT, command);
    const rotated = Keyring.parse(`${KEY_B},${KEY_A}`);
    expect(requestHashMatches(rotated, request, hash)).toBe(true);
    expect(
      requestHashMatches(rotated, { ...request, command: { ...command, amount: '10.01' } }, hash),
    ).toBe(false);
  });

  it('verifies a row from before keyed hashes (no key id) by plain SHA-256', () => {
    const legacy = { digest: requestHash(CREATE_PAYMENT, command), keyId: null };
    const keyring = Keyring.parse(KEY_B);
    expect(requestHashMatches(keyring, request, legacy)).toBe(true);
    expect(
      requestHashMatches(keyring, { ...request, command: { ...command, currency: 'USD' } }, legacy),
    ).toBe(false);
  });

  it('refuses to judge a hash whose key is gone, rather than call it another request', () => {
    const hash = keyedRequestHash(Keyring.parse(KEY_A), CREATE_PAYMENT, command);
    expect(() => requestHashMatches(Keyring.parse(KEY_B), request, hash)).toThrow(
      DataKeyUnknownError,
    );
  });
});

describe('a webhook signing secret at rest', () => {
  const keyring = Keyring.parse(KEY_A);
  const endpoint = { tenantId: 'tenant-1', endpointId: 'endpoint-1' };
  const secret = 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0';

  it('is sealed, bound to its endpoint: copied to another one it does not open', () => {
    const sealed = sealWebhookSecret(keyring, endpoint, secret);
    expect(sealed).not.toContain(secret.slice('whsec_'.length));
    expect(openWebhookSecret(keyring, endpoint, sealed)).toBe(secret);
    for (const other of [
      { ...endpoint, endpointId: 'endpoint-2' },
      { ...endpoint, tenantId: 'tenant-2' },
    ]) {
      expect(() => openWebhookSecret(keyring, other, sealed)).toThrow(CiphertextRejectedError);
    }
  });

  it('registered before sealing (whsec_ in clear) is used as it is', () => {
    expect(openWebhookSecret(keyring, endpoint, secret)).toBe(secret);
  });
});
