import { describe, expect, it } from 'vitest';
import { assertEncodableText, assertFreeJson, freeTextProblem } from './free-text.ts';
import { InputInvalidError } from '../errors.ts';

describe('control characters in free text', () => {
  it.each(['\u0000', 'a\u0001b', 'esc\u001b[31m', 'form\ffeed', 'vertical\vtab'])(
    'refuses %j',
    (text) => {
      expect(freeTextProblem(text)).toMatch(/control characters/);
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
    expect(freeTextProblem(text)).toMatch(/well-formed Unicode/);
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
    expect(() =>
      assertFreeJson('metadata', { order: 'A-1', lines: [1, 2, { sku: 'x' }] }),
    ).not.toThrow();
  });
});
