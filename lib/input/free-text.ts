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
 * A caller adds rules of its own through a screen (payments refuses card numbers:
 * services/payments/card-number-screen.ts); lib knows no domain's.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const FORBIDDEN_CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * A caller's own rule over free text: why a text is refused, as a phrase that follows the
 * field's name ("must not contain …"), or null when it passes.
 */
export type TextScreen = (text: string) => string | null;

/** Why a free text is refused (the encoding rules, then the screen's), or null. */
export function freeTextProblem(text: string, screen?: TextScreen): string | null {
  const problem = encodingProblem(text);
  return problem === null ? (screen?.(text) ?? null) : PROBLEM_MESSAGES[problem];
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
} as const;

/** Throws InputInvalidError (BAD_USER_INPUT) naming the field when the text may not be stored. */
export function assertFreeText(
  field: string,
  text: string | null | undefined,
  screen?: TextScreen,
): void {
  if (text === null || text === undefined) return;
  const problem = freeTextProblem(text, screen);
  if (problem !== null) throw new InputInvalidError(field, `${field} ${problem}`);
}

/**
 * Every text a JSON value holds: its keys and string values at any depth, and its numbers as
 * written in decimal (a card number sent as a JSON number is a card number all the same).
 * Without recursion: the value's depth is the client's choice.
 */
export function* textsOfJson(value: unknown): Generator<string> {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next === 'string') yield next;
    else if (typeof next === 'number') yield String(next);
    else if (Array.isArray(next)) pending.push(...(next as unknown[]));
    else if (next !== null && typeof next === 'object') {
      for (const [key, inner] of Object.entries(next)) {
        yield key;
        pending.push(inner);
      }
    }
  }
}

/** The same rules over every text of a JSON value (textsOfJson), which must be plain JSON. */
export function assertFreeJson(field: string, value: unknown, screen?: TextScreen): void {
  for (const text of textsOfJson(value)) assertFreeText(field, text, screen);
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
