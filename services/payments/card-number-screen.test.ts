import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  containsCardNumber,
  digitRunsHoldCardNumber,
  passesLuhn,
  refuseCardNumbers,
} from './card-number-screen.ts';
import { assertFreeJson, freeTextProblem } from '../../lib/input/free-text.ts';

describe('card numbers in free text', () => {
  it.each([
    ['a bare Visa test number', '4242424242424242'],
    ['inside other text', 'order for 4000056655665556 please'],
    ['printed in groups of four', 'card 4242 4242 4242 4242'],
    ['printed with dashes', '4242-4242-4242-4242'],
    ['an Amex printed 4-6-5', '3782 822463 10005'],
    ['a 13-digit number', '4222222222222'],
    ['a 19-digit number', 'pan 6249431234567890125 end'],
    ['a Discover number', '6011111111111117'],
    ['with dots', '4111.1111.1111.1111'],
    ['with slashes', '4111/1111/1111/1111'],
    ['with double spaces', '4111  1111  1111  1111'],
    ['with dashes in another grouping', '41-1111-11111-111-11'],
    ['in two halves', '41111111-11111111'],
    ['with underscores, as a payment-method token', 'pm_4111_1111_1111_1111'],
    ['with mixed separators', '4111 - 1111 / 1111 . 1111'],
    ['with zero-width spaces', '4111\u200b1111\u200b1111\u200b1111'],
    ['one digit at a time', '4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1'],
    ['beside its expiry date', 'card 4111 1111 1111 1111 12/27'],
    ['after an order number', 'order 12 4111 1111 1111 1111'],
    ['in full-width digits', '４１１１ １１１１ １１１１ １１１１'],
    ['in mathematical digits', '𝟒𝟏𝟏𝟏𝟏𝟏𝟏𝟏𝟏𝟏𝟏𝟏𝟏𝟏𝟏𝟏'],
    ['in Arabic-Indic digits', '٤١١١١١١١١١١١١١١١'],
    ['in Devanagari digits', '४१११-११११११११११११'],
  ])('finds %s', (_, text) => {
    expect(containsCardNumber(text)).toBe(true);
    expect(freeTextProblem(text, refuseCardNumbers)).toMatch(/must not contain a card number/);
  });

  it.each([
    ['a number failing the Luhn check', '4242424242424241'],
    ['twelve digits', '424242424242'],
    ['a run longer than any card', '42424242424242424242424'],
    ['a date and time', 'order 2024-12-04 10:30:45'],
    ['a seed and an index', 'chaos-1456554487-123'],
    ['numbers joined by dashes but not grouped as cards', '1234567-4242424'],
    ['no digits', 'coffee beans'],
    ['an ISO timestamp', '2026-02-14T10:20:30.123Z'],
    ['a date and a time', 'shipped 2026-02-14 10:20:30.123456'],
    ['UUIDs whose all-digit groups would pass Luhn joined', '4e5bbaab-3ffd-4690-9611-42381fa3fbb1'],
    ['an upper-case UUID', 'B5158665-2106-4990-AB30-360FF9397FB6'],
    ['numbers in a list, which commas keep apart', '4111, 1111, 1111, 1111'],
    ['a long gap between numbers', '4111 and 1111 and 1111 and 1111'],
    // Each of these passes Luhn: only the issuer ranges tell them from a card.
    ['a key from a millisecond timestamp', 'order-1733412345675'],
    ['a key from a microsecond timestamp', 'order-1733412345671233'],
    ['a key from a nanosecond timestamp', 'job_1733412345671234561'],
    ['a date-based number', 'invoice 20261205000015'],
  ])('accepts %s', (_, text) => {
    expect(containsCardNumber(text)).toBe(false);
  });

  it("accepts random UUIDs, the SDK's idempotency keys", () => {
    const refused = fc
      .sample(fc.uuid(), { seed: 34, numRuns: 20_000 })
      .filter((uuid) => containsCardNumber(uuid));
    expect(refused).toEqual([]);
  });

  it('gives the answer of the full screen when it takes its shortcut', () => {
    // Cards of the shortest length and longer, pieces of them, and ASCII and non-ASCII around
    // them: whatever has no card by the full screen has none by the shortcut, and the reverse.
    const cardsAndPieces = fc.constantFrom(
      '4222222222222',
      '4242424242424242',
      '6249431234567890125',
      '422222222222',
      '4242 4242 4242 4242',
      '４２２２２２２２２２２２２',
      '٤٢٢٢٢٢٢٢٢٢٢٢٢',
    );
    const text = fc
      .array(
        fc.oneof(cardsAndPieces, fc.string({ maxLength: 6 }), fc.stringMatching(/^\d{1,4}$/)),
        {
          maxLength: 5,
        },
      )
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(text, (t) => containsCardNumber(t) === digitRunsHoldCardNumber(t)),
      { seed: 33, numRuns: 20_000 },
    );
  });

  it('implements Luhn as issuers do', () => {
    expect(passesLuhn('79927398713')).toBe(true);
    expect(passesLuhn('79927398710')).toBe(false);
  });
});

describe('the screen applied to free JSON', () => {
  it('finds a card number at any depth', () => {
    expect(() =>
      assertFreeJson('metadata', { a: { b: ['4242424242424242'] } }, refuseCardNumbers),
    ).toThrow(/card number/);
    expect(() => assertFreeJson('metadata', { a: { b: ['4242424242424242'] } })).not.toThrow();
  });
});
