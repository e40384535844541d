import { AppError, LIB_ERRORS } from '../../lib/errors.ts';
import { parseDateTime } from '../../lib/input/date-time.ts';
import { GraphQLError, GraphQLScalarType, Kind, type ValueNode } from 'graphql';

/**
 * The string scalars only check that they are strings (DateTime aside, below). Their real validation (key format,
 * currency table, amount scale per currency) happens once, in the payments command, so every
 * caller — GraphQL or internal tRPC — gets the same stable error codes (IDEMPOTENCY_KEY_INVALID
 * rather than a generic coercion failure).
 */
function notAString(name: string): never {
  throw new GraphQLError(`${name} must be a string`, {
    extensions: { code: LIB_ERRORS.BAD_USER_INPUT.code },
  });
}

function stringScalar(name: string, description: string): GraphQLScalarType<string, string> {
  const fail = () => notAString(name);
  return new GraphQLScalarType<string, string>({
    name,
    description,
    serialize: (value) => (typeof value === 'string' ? value : fail()),
    parseValue: (value) => (typeof value === 'string' ? value : fail()),
    parseLiteral: (ast) => (ast.kind === Kind.STRING ? ast.value : fail()),
  });
}

export const MoneyScalar = stringScalar('Money', 'Decimal string such as "10.50".');
export const CurrencyCodeScalar = stringScalar('CurrencyCode', 'ISO 4217 alphabetic code.');
export const IdempotencyKeyScalar = stringScalar(
  'IdempotencyKey',
  '1 to 255 characters of [A-Za-z0-9._:-].',
);
/**
 * DateTime is checked here, in the scalar, so every argument of the type gets the same check
 * before any resolver runs: an impossible date or time (Feb 30, year 0000, hour 24, a leap
 * second, an offset of +24:00) is BAD_USER_INPUT, never a PostgreSQL error surfacing as a 500.
 * The value passed on is the same instant in UTC (lib/input/date-time.ts). The refusal is an
 * AppError, which the gateway's plugin turns into BAD_USER_INPUT naming the argument, whether
 * the value came as a literal or in a variable (nameScalarRefusal in errors.ts).
 */
function instantOf(text: string): string {
  const parsed = parseDateTime(text);
  if (parsed.ok) return parsed.utc;
  throw new AppError(LIB_ERRORS.BAD_USER_INPUT, { message: `DateTime ${parsed.problem}` });
}

export const DateTimeScalar = new GraphQLScalarType<string, string>({
  name: 'DateTime',
  description: 'RFC 3339 timestamp.',
  serialize: (value) => (typeof value === 'string' ? value : notAString('DateTime')),
  parseValue: (value) => (typeof value === 'string' ? instantOf(value) : notAString('DateTime')),
  parseLiteral: (ast) => (ast.kind === Kind.STRING ? instantOf(ast.value) : notAString('DateTime')),
});

function literalToJson(
  ast: ValueNode,
  variables: Record<string, unknown> | null | undefined,
): unknown {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return ast.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(ast.value);
    case Kind.NULL:
      return null;
    case Kind.LIST:
      return ast.values.map((v) => literalToJson(v, variables));
    case Kind.OBJECT:
      return Object.fromEntries(
        ast.fields.map((f) => [f.name.value, literalToJson(f.value, variables)]),
      );
    case Kind.VARIABLE:
      return variables?.[ast.name.value];
    case Kind.ENUM:
      return ast.value;
  }
}

export const JsonScalar = new GraphQLScalarType({
  name: 'JSON',
  description: 'Any JSON value.',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast, variables) => literalToJson(ast, variables),
});
