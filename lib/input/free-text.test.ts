import { describe, expect, it } from 'vitest';
import {
  assertEncodableText,
  assertFreeJson,
  containsCardNumber,
  freeTextProblem,
  passesLuhn,
} from './free-text.ts';
import { InputInvalidError } from '../errors.ts';

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
    expect(freeTextProblem(text)).toBe('card number');
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

describe('control characters in free text', () => {
  it.each(['\u0000', 'a\u0001b', 'esc\u001b[31m', 'form\ffeed', 'vertical\vtab'])(
    'refuses %j',
    (text) => {
      expect(freeTextProblem(text)).toBe('control character');
    },
  );

  it('accepts tab, newline and carriage return', () => {
    expect(freeTextProblem('line one\r\n\tline two\n')).toBeNull();
  });
});

describe('lone UTF-16 surrogates in free text', () => {
  it.each([
    ['a high surrogate alone', '\ud800'],
    ['a high surrogate before a letter', 'note \udbff!'],
    ['a low surrogate alone', '\udc00'],
    ['a low surrogate after a letter', 'a\udfff'],
    ['two highs', '\ud83d\ud83d\ude00'],
    ['a reversed pair', '\ude00\ud83d'],
  ])('refuses %s', (_, text) => {
    expect(freeTextProblem(text)).toBe('lone surrogate');
    expect(() => assertEncodableText('reference', text)).toThrow(/well-formed Unicode/);
  });

  it('accepts pairs, and characters beyond the basic plane', () => {
    expect(freeTextProblem('smile \ud83d\ude00 and 𝄞 and é')).toBeNull();
    expect(() => assertEncodableText('reference', '\ud83d\ude00')).not.toThrow();
  });
});

describe('free JSON', () => {
  it('checks keys and values at every depth, without recursion', () => {
    let deep: unknown = 'x\u0000';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(() => assertFreeJson('metadata', deep)).toThrow(InputInvalidError);
    expect(() => assertFreeJson('metadata', { ['k\u0000']: 1 })).toThrow(/metadata/);
    expect(() => assertFreeJson('metadata', { a: [{ b: { c: 'x\ud800' } }] })).toThrow(
      /well-formed/,
    );
    expect(() => assertFreeJson('metadata', { ['\udc00']: 1 })).toThrow(/well-formed/);
    expect(() => assertFreeJson('metadata', { a: { b: ['4242424242424242'] } })).toThrow(
      /card number/,
    );
    expect(() =>
      assertFreeJson('metadata', { order: 'A-1', lines: [1, 2, { sku: 'x' }] }),
    ).not.toThrow();
  });
});
