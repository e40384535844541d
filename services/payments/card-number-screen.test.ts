import { describe, expect, it } from 'vitest';
import { containsCardNumber, passesLuhn, refuseCardNumbers } from './card-number-screen.ts';
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
  ])('accepts %s', (_, text) => {
    expect(containsCardNumber(text)).toBe(false);
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
