import {
  getNullableType,
  isInputObjectType,
  isListType,
  isScalarType,
  type GraphQLInputType,
  type GraphQLResolveInfo,
} from 'graphql';
import { LIB_ERRORS, publicError, type PublicError } from '../../lib/errors.ts';
import { textsOfJson, type TextScreen } from '../../lib/input/free-text.ts';

/**
 * The scalars a merchant writes freely, and so may paste a card number into: every String
 * (descriptions, references, reasons, payment-method tokens, URLs, event types), the
 * idempotency key, and JSON (metadata keys and values). An ID names something we issued and
 * Money, CurrencyCode, DateTime, numbers and enums have formats of their own, so they are not
 * screened: a screen that refused one of our own ids would lock the merchant out of it.
 */
const FREE_TEXT_SCALARS = new Set(['String', 'IdempotencyKey', 'JSON']);

/**
 * The one screen over every merchant-supplied text of a mutation, run by the gateway before
 * any service: it follows the schema's argument types, so a field added to an input later is
 * screened without anyone remembering to. A refusal is BAD_USER_INPUT naming the input field,
 * and nothing reaches a service, so nothing is stored, charged or sent on. (The services keep
 * their own screens on their free text for internal callers.)
 */
export function screenArguments(
  info: GraphQLResolveInfo,
  args: Record<string, unknown>,
  screen: TextScreen,
): PublicError | null {
  for (const argument of info.parentType.getFields()[info.fieldName]?.args ?? []) {
    // Inputs are named by their own fields (`metadata`), as the services name them.
    const name = argument.name === 'input' ? undefined : argument.name;
    const problem = screenValue({ value: args[argument.name], type: argument.type, name }, screen);
    if (problem !== null) return problem;
  }
  return null;
}

interface Located {
  value: unknown;
  type: GraphQLInputType;
  /** The top-level input field the value is in, once known. */
  name: string | undefined;
}

function screenValue({ value, type, name }: Located, screen: TextScreen): PublicError | null {
  if (value === null || value === undefined) return null;
  const nullable = getNullableType(type);
  if (isListType(nullable)) {
    for (const item of value as unknown[]) {
      const problem = screenValue({ value: item, type: nullable.ofType, name }, screen);
      if (problem !== null) return problem;
    }
    return null;
  }
  if (isInputObjectType(nullable)) {
    for (const field of Object.values(nullable.getFields())) {
      const inner = (value as Record<string, unknown>)[field.name];
      const problem = screenValue(
        { value: inner, type: field.type, name: name ?? field.name },
        screen,
      );
      if (problem !== null) return problem;
    }
    return null;
  }
  if (!isScalarType(nullable) || !FREE_TEXT_SCALARS.has(nullable.name)) return null;
  const field = name ?? nullable.name;
  for (const text of typeof value === 'string' ? [value] : textsOfJson(value)) {
    const problem = screen(text);
    if (problem !== null)
      return publicError(LIB_ERRORS.BAD_USER_INPUT, { message: `${field} ${problem}`, field });
  }
  return null;
}
