// Exact arithmetic on the provider's decimal-string amounts. Amounts are converted to integer
// minor units at the charge's own scale (its number of decimals), so "10.50" - "0.1" never
// meets a binary floating-point rounding error and results are written back at that scale.

/** Non-negative decimal without sign, exponent or leading zeros: "10", "10.50", "0.01".
 * Bounded so an absurd amount is a 400 instead of a precision surprise downstream. */
const AMOUNT_PATTERN = /^(0|[1-9]\d{0,17})(\.\d{1,8})?$/;
const NON_ZERO_DIGIT = /[1-9]/;
const ONLY_ZEROS = /^0*$/;

/** True for a well-formed decimal string greater than zero. */
export function isPositiveAmount(amount: unknown): amount is string {
  return typeof amount === 'string' && AMOUNT_PATTERN.test(amount) && NON_ZERO_DIGIT.test(amount);
}

/** Number of decimals written in a well-formed amount: "10.50" → 2, "7" → 0. */
export function scaleOf(amount: string): number {
  return amount.split('.')[1]?.length ?? 0;
}

/** The amount in units of 10^-scale, or undefined when it needs more decimals than the scale
 * has ("5.001" at scale 2). Trailing zeros beyond the scale are fine: "5.000" is 500 at 2. */
export function toMinorUnits(amount: string, scale: number): bigint | undefined {
  const [whole = '0', fraction = ''] = amount.split('.');
  if (!ONLY_ZEROS.test(fraction.slice(scale))) return undefined;
  return BigInt(`${whole}${fraction.slice(0, scale).padEnd(scale, '0')}`);
}

/** Writes non-negative minor units back as a decimal string with exactly `scale` decimals. */
export function fromMinorUnits(units: bigint, scale: number): string {
  if (units < 0n) throw new RangeError(`amounts are never negative, got ${units} minor units`);
  if (scale === 0) return units.toString();
  const digits = units.toString().padStart(scale + 1, '0');
  return `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}
