import type { TextScreen } from '../../lib/input/free-text.ts';

/** Card numbers have 13 to 19 digits (ISO/IEC 7812). */
const PAN_MIN_DIGITS = 13;
const PAN_MAX_DIGITS = 19;
/**
 * The most characters that may stand between two digits of one card: " - " and " / " are
 * three. A longer gap is prose between two numbers.
 */
const MAX_SEPARATOR_CHARS = 3;
/**
 * What may stand between the digits of one card: anything but a letter or a digit (spaces of
 * any kind and number, dashes, dots, slashes, underscores, invisible format characters,
 * combining marks). Letters end a run, so ids and tokens (a UUID, hex) are judged in their
 * all-digit stretches only. List and clock punctuation (, ; :) and line breaks end a run too:
 * joining the numbers of a list, a time ("2026-02-14 10:20:30") or two phone numbers would
 * make cards of unrelated numbers.
 */
const SEPARATOR = String.raw`[^\p{L}\p{N},;:\n\r\u0085\u2028\u2029]`;
const DIGIT_RUN = new RegExp(String.raw`\d(?:${SEPARATOR}{0,${MAX_SEPARATOR_CHARS}}\d)*`, 'gu');
const DIGIT_GROUP = /\d+/g;
/**
 * A UUID in its canonical form, the shape of this API's ids and of the SDK's idempotency keys.
 * Its dashes would join its all-digit groups ("…-4690-9611-4238…") into a stretch that passes
 * Luhn about once in every few thousand random UUIDs, refusing a key the SDK chose; a UUID is
 * read as one word instead, since a card has no hex letters and never 32 digits.
 */
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const WORD = 'x';
const NON_ASCII_DIGIT = /(?![0-9])\p{Nd}/gu;
const DECIMAL_DIGIT = /^\p{Nd}$/u;
/** Unicode encodes each set of decimal digits as ten consecutive code points, 0 to 9. */
const DIGITS_PER_SET = 10;

/**
 * The text with every digit written as an ASCII one: NFKC first (full-width ４, circled ①,
 * mathematical 𝟒), then any other decimal digit (Arabic-Indic ٤, Devanagari ४) by its value.
 * Unicode keeps each set of decimal digits as ten consecutive code points from 0 to 9 (a
 * stability policy), some sets directly after others, so a digit's value is its distance from
 * the start of its run of digits, modulo ten.
 */
function asciiDigits(text: string): string {
  return text.normalize('NFKC').replace(NON_ASCII_DIGIT, (digit) => {
    const point = digit.codePointAt(0) ?? 0;
    let first = point;
    while (DECIMAL_DIGIT.test(String.fromCodePoint(first - 1))) first -= 1;
    return String((point - first) % DIGITS_PER_SET);
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

/**
 * The issuer ranges cards are issued in (the leading digits, ISO/IEC 7812's issuer
 * identification number) with the lengths each scheme issues: UATP, Mir, Mastercard's 2-series,
 * American Express, Diners Club, JCB, Visa, Mastercard, Maestro, Discover, UnionPay, RuPay and
 * the rest of 6. A number outside them is not a card anyone could charge, and it is what
 * merchants' own numbers mostly are: a millisecond, microsecond or nanosecond timestamp starts
 * with 1 and has 13, 16 or 19 digits; a date-based number starts with 19 or 20.
 */
const ISSUER_RANGES: ReadonlyArray<{ leading: RegExp; lengths: readonly [number, number] }> = [
  { leading: /^1/, lengths: [15, 15] },
  { leading: /^220[0-4]/, lengths: [16, 19] },
  { leading: /^(222[1-9]|22[3-9]\d|2[3-6]\d\d|27[01]\d|2720)/, lengths: [16, 16] },
  { leading: /^3[47]/, lengths: [15, 15] },
  { leading: /^3(0[0-5]|[689])/, lengths: [14, 19] },
  { leading: /^35(2[89]|[3-8]\d)/, lengths: [16, 19] },
  { leading: /^4/, lengths: [13, 19] },
  { leading: /^5[1-5]/, lengths: [16, 16] },
  { leading: /^5[06-9]/, lengths: [13, 19] },
  { leading: /^6/, lengths: [13, 19] },
  { leading: /^81/, lengths: [16, 19] },
];

function isCardNumber(digits: string): boolean {
  return (
    digits.length >= PAN_MIN_DIGITS &&
    digits.length <= PAN_MAX_DIGITS &&
    ISSUER_RANGES.some(
      (r) =>
        digits.length >= r.lengths[0] && digits.length <= r.lengths[1] && r.leading.test(digits),
    ) &&
    passesLuhn(digits)
  );
}

/**
 * True when the text holds a card number: after asciiDigits, a run of digits with at most
 * MAX_SEPARATOR_CHARS separators between each two, in which some stretch of whole groups holds
 * 13–19 digits that pass the Luhn check. So a card is found bare, printed in groups of any size,
 * spelled out with dots, slashes, underscores or double spaces, in full-width or other digits,
 * and beside other numbers ("4111 1111 1111 1111 12/27"). A run of more than 19 digits with no
 * separator is judged whole, so a long order number is not a card.
 *
 * The trade-off: a stretch of 13–19 digits in an issuer range (ISSUER_RANGES) passes Luhn one
 * time in ten, so text that joins such numbers with spaces, dots or dashes (numbers in a row, an
 * amount beside a phone number) is refused that often; letters and list punctuation between
 * numbers keep them apart, and timestamps and dates fall outside the ranges. A refused text costs the merchant a
 * rewording; a card number let through lands in clear in our tables, the provider's and every
 * webhook, which puts them all in PCI DSS scope. A card disguised on purpose ("four one one
 * one …", digits a sentence apart) is beyond any screen.
 */
export function containsCardNumber(text: string): boolean {
  return !tooFewAsciiDigits(text) && digitRunsHoldCardNumber(text);
}

/**
 * True when the text is all ASCII and has fewer digits than the shortest card: it cannot hold
 * one. ASCII is what NFKC leaves alone and holds no other decimal digit, so for such text
 * asciiDigits changes nothing and this count is the one the runs are made of. Most of what the
 * screen is given (keys, amounts, currency codes, tokens, references) ends here, without the
 * normalisation and the Unicode-aware patterns that every request would otherwise pay for.
 */
function tooFewAsciiDigits(text: string): boolean {
  let digits = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code > 0x7f) return false;
    if (code >= 0x30 && code <= 0x39 && ++digits >= PAN_MIN_DIGITS) return false;
  }
  return true;
}

/** containsCardNumber without its shortcut: exported for the test that holds them equal. */
export function digitRunsHoldCardNumber(text: string): boolean {
  for (const [run] of asciiDigits(text).replace(UUID, WORD).matchAll(DIGIT_RUN)) {
    const groups = run.match(DIGIT_GROUP) ?? [];
    for (let first = 0; first < groups.length; first++) {
      let digits = '';
      for (let last = first; last < groups.length && digits.length <= PAN_MAX_DIGITS; last++) {
        digits += groups[last];
        if (isCardNumber(digits)) return true;
      }
    }
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
