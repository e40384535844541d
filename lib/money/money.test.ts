import { describe, expect, it } from 'vitest';
import { formatAmount, normaliseCurrency, parseAmount } from './money.ts';

describe('parseAmount', () => {
  it.each([
    ['10.5', 'EUR', 1050n],
    ['10.50', 'EUR', 1050n],
    ['10', 'EUR', 1000n],
    ['0.01', 'EUR', 1n],
    ['1500', 'JPY', 1500n],
    ['1.5', 'KWD', 1500n],
    ['1.234', 'KWD', 1234n],
    ['0.0001', 'CLF', 1n],
  ])('%s %s = %s minor units', (raw, currency, minor) => {
    expect(parseAmount(raw, currency)).toEqual({ ok: true, minor });
  });

  it.each([
    ['10.505', 'EUR', 'AMOUNT_SCALE'],
    ['1.5', 'JPY', 'AMOUNT_SCALE'],
    ['0', 'EUR', 'AMOUNT_NOT_POSITIVE'],
    ['0.00', 'EUR', 'AMOUNT_NOT_POSITIVE'],
    ['-1', 'EUR', 'AMOUNT_FORMAT'],
    ['1e3', 'EUR', 'AMOUNT_FORMAT'],
    ['1,50', 'EUR', 'AMOUNT_FORMAT'],
    [' 1', 'EUR', 'AMOUNT_FORMAT'],
    ['.5', 'EUR', 'AMOUNT_FORMAT'],
    ['5.', 'EUR', 'AMOUNT_FORMAT'],
    ['', 'EUR', 'AMOUNT_FORMAT'],
    ['10000000000000.01', 'EUR', 'AMOUNT_TOO_LARGE'],
    ['1', 'XTS', 'CURRENCY_UNKNOWN'],
  ])('%s %s is refused: %s', (raw, currency, error) => {
    expect(parseAmount(raw, currency)).toEqual({ ok: false, error });
  });
});

describe('formatAmount', () => {
  it('uses the currency’s minor unit', () => {
    expect(formatAmount(1050n, 'EUR')).toBe('10.50');
    expect(formatAmount(5n, 'EUR')).toBe('0.05');
    expect(formatAmount(1500n, 'JPY')).toBe('1500');
    expect(formatAmount(1500n, 'KWD')).toBe('1.500');
    expect(formatAmount(0n, 'USD')).toBe('0.00');
  });
});

describe('normaliseCurrency', () => {
  it('upper-cases active codes and refuses XXX, XTS, metals and unknown codes', () => {
    expect(normaliseCurrency('eur')).toBe('EUR');
    expect(normaliseCurrency('Jpy')).toBe('JPY');
    for (const code of ['XXX', 'XTS', 'XAU', 'XDR', 'ABC', 'EU', 'EURO', ''])
      expect(normaliseCurrency(code)).toBeNull();
  });
});
