import { MINOR_UNITS } from './iso4217.ts';

/** The largest amount we accept, in minor units: well inside bigint and any PSP's limits. */
const MAX_AMOUNT_MINOR = 10n ** 15n;

/** A decimal string: digits, optionally a point and more digits. No sign, exponent or spaces. */
const DECIMAL_PATTERN = /^(\d{1,18})(?:\.(\d{1,4}))?$/;

export type MoneyError =
  | 'CURRENCY_UNKNOWN'
  | 'AMOUNT_FORMAT'
  | 'AMOUNT_SCALE'
  | 'AMOUNT_NOT_POSITIVE'
  | 'AMOUNT_TOO_LARGE';

/** Upper-cases and checks an ISO 4217 code; `null` when it is not an active currency. */
export function normaliseCurrency(raw: string): string | null {
  const code = raw.trim().toUpperCase();
  return /^[A-Z]{3}$/.test(code) && Object.hasOwn(MINOR_UNITS, code) ? code : null;
}

export function minorUnitOf(currency: string): number {
  const digits = MINOR_UNITS[currency];
  if (digits === undefined) throw new RangeError(`not an active ISO 4217 currency: ${currency}`);
  return digits;
}

/**
 * Parses a decimal amount into integer minor units of `currency`: "10.5" and "10.50" EUR are
 * both 1050. The written scale may not exceed the currency's minor unit ("10.505" EUR and
 * "1.5" JPY are refused rather than rounded: rounding money silently is a bug).
 */
export function parseAmount(
  raw: string,
  currency: string,
): { ok: true; minor: bigint } | { ok: false; error: MoneyError } {
  const digits = MINOR_UNITS[currency];
  if (digits === undefined) return { ok: false, error: 'CURRENCY_UNKNOWN' };
  const match = DECIMAL_PATTERN.exec(raw);
  if (!match) return { ok: false, error: 'AMOUNT_FORMAT' };
  const whole = match[1] ?? '0';
  const fraction = match[2] ?? '';
  if (fraction.length > digits) return { ok: false, error: 'AMOUNT_SCALE' };
  const minor = BigInt(whole) * 10n ** BigInt(digits) + BigInt(fraction.padEnd(digits, '0') || '0');
  if (minor <= 0n) return { ok: false, error: 'AMOUNT_NOT_POSITIVE' };
  if (minor > MAX_AMOUNT_MINOR) return { ok: false, error: 'AMOUNT_TOO_LARGE' };
  return { ok: true, minor };
}

/** Formats minor units as the currency's canonical decimal string: 1050n EUR → "10.50". */
export function formatAmount(minor: bigint, currency: string): string {
  const digits = minorUnitOf(currency);
  const negative = minor < 0n;
  const abs = (negative ? -minor : minor).toString().padStart(digits + 1, '0');
  const body = digits === 0 ? abs : `${abs.slice(0, -digits)}.${abs.slice(-digits)}`;
  return negative ? `-${body}` : body;
}
