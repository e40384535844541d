import { InputInvalidError } from '../errors.ts';

/**
 * Rules for text a client chooses freely (references, descriptions, reasons, metadata) before
 * it is stored, hashed or sent on to the provider:
 * - NUL and the other C0 controls (tab, newline and carriage return aside): PostgreSQL refuses
 *   U+0000 in text and jsonb with an error that would surface as a 500, and the rest have no
 *   place in a payment's record or in the log lines that quote it.
 * - A lone UTF-16 surrogate (a high one without its low, or a low alone): JavaScript strings can
 *   hold one, UTF-8 cannot. In json and jsonb its escape is an error that would surface as a
 *   500; in text the driver silently writes U+FFFD instead, so what is stored is not what was
 *   sent (and the request hash covers what was sent).
 * - A card number (PAN): a payments API that accepts tokens must never store a PAN that a
 *   merchant pasted into the wrong field, or the tables fall into PCI DSS scope.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const FORBIDDEN_CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

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

/** Why a free text is refused, or null when it may be stored. */
export function freeTextProblem(
  text: string,
): 'control character' | 'lone surrogate' | 'card number' | null {
  return encodingProblem(text) ?? (containsCardNumber(text) ? 'card number' : null);
}

/** Why PostgreSQL could not hold the text as sent, or null. */
function encodingProblem(text: string): 'control character' | 'lone surrogate' | null {
  if (FORBIDDEN_CONTROL.test(text)) return 'control character';
  if (LONE_SURROGATE.test(text)) return 'lone surrogate';
  return null;
}

const PROBLEM_MESSAGES = {
  'control character': 'must not contain NUL or other control characters',
  'lone surrogate': 'must be well-formed Unicode, without a lone UTF-16 surrogate',
  'card number': 'must not contain a card number; send a payment method token instead',
} as const;

/** Throws InputInvalidError (BAD_USER_INPUT) naming the field when the text may not be stored. */
export function assertFreeText(field: string, text: string | null | undefined): void {
  if (text === null || text === undefined) return;
  const problem = freeTextProblem(text);
  if (problem !== null) throw new InputInvalidError(field, `${field} ${PROBLEM_MESSAGES[problem]}`);
}

/**
 * The same rules over every key and string value of a JSON value, without recursion (the value's
 * depth is the client's choice). Call it on a value already known to be plain JSON.
 */
export function assertFreeJson(field: string, value: unknown): void {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next === 'string') assertFreeText(field, next);
    else if (Array.isArray(next)) pending.push(...(next as unknown[]));
    else if (next !== null && typeof next === 'object') {
      for (const [key, inner] of Object.entries(next)) {
        assertFreeText(field, key);
        pending.push(inner);
      }
    }
  }
}

/**
 * The encoding rules alone (no controls, no lone surrogates), for identifiers and filters that
 * are matched rather than stored as written (a payment id, a reference to search for):
 * PostgreSQL refuses U+0000 there too, and the refusal must be the client's BAD_USER_INPUT, not
 * a 500 or a search for a string other than the one sent.
 */
export function assertEncodableText(field: string, text: string | null | undefined): void {
  if (text === null || text === undefined) return;
  const problem = encodingProblem(text);
  if (problem !== null) throw new InputInvalidError(field, `${field} ${PROBLEM_MESSAGES[problem]}`);
}
