import type { TextScreen } from '../../lib/input/free-text.ts';

/** Card numbers have 13 to 19 digits (ISO/IEC 7812). */
const PAN_MIN_DIGITS = 13;
const PAN_MAX_DIGITS = 19;
/**
 * Digits written with single spaces or dashes between them, as cards are printed (4-4-4-4,
 * Amex 4-6-5). A run is judged whole, so an order number longer than any card is not a card.
 */
const DIGIT_RUN = /\d(?:[ -]?\d)*/g;
/**
 * A card as printed: at least three groups, each of 4–6 digits but the last, which may have 3
 * (4-4-4-4, 4-6-5, 4-4-4-4-3). Runs grouped otherwise (dates, times, "order-2024-17") are judged
 * group by group, so joining unrelated numbers does not make a card of them.
 */
const PRINTED = { minGroups: 3, minDigits: 4, maxDigits: 6, minLastDigits: 3 } as const;

function isPrintedCard(groups: string[]): boolean {
  if (groups.length < PRINTED.minGroups) return false;
  return groups.every((group, i) => {
    const min = i === groups.length - 1 ? PRINTED.minLastDigits : PRINTED.minDigits;
    return group.length >= min && group.length <= PRINTED.maxDigits;
  });
}

/** True when the digits pass the Luhn check, as every issued card number does. */
export function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

function isCardNumber(digits: string): boolean {
  return digits.length >= PAN_MIN_DIGITS && digits.length <= PAN_MAX_DIGITS && passesLuhn(digits);
}

/** True when the text holds a Luhn-valid run of 13–19 digits, bare or printed in groups. */
export function containsCardNumber(text: string): boolean {
  for (const [run] of text.matchAll(DIGIT_RUN)) {
    const groups = run.split(/[ -]/);
    if (groups.some(isCardNumber)) return true;
    if (isPrintedCard(groups) && isCardNumber(groups.join(''))) return true;
  }
  return false;
}

/**
 * Payments' screen over the free text a merchant sends (references, descriptions, reasons,
 * metadata): a card number (PAN). A payments API that accepts tokens must never store a PAN
 * that a merchant pasted into the wrong field, or send it on to the provider and the webhooks:
 * the tables would fall into PCI DSS scope. lib/input/free-text.ts applies it.
 */
export const refuseCardNumbers: TextScreen = (text) =>
  containsCardNumber(text)
    ? 'must not contain a card number; send a payment method token instead'
    : null;
