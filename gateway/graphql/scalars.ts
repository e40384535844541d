import { LIB_ERRORS } from '../../lib/errors.ts';
import { GraphQLError, GraphQLScalarType, Kind, type ValueNode } from 'graphql';

/**
 * The string scalars only check that they are strings. Their real validation (key format,
 * currency table, amount scale per currency) happens once, in the payments command, so every
 * caller — GraphQL or internal tRPC — gets the same stable error codes (IDEMPOTENCY_KEY_INVALID
 * rather than a generic coercion failure).
 */
function stringScalar(name: string, description: string): GraphQLScalarType<string, string> {
  const fail = (): never => {
    throw new GraphQLError(`${name} must be a string`, {
      extensions: { code: LIB_ERRORS.BAD_USER_INPUT.code },
    });
  };
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
export const DateTimeScalar = stringScalar('DateTime', 'RFC 3339 timestamp.');

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
