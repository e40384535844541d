import { readFileSync } from 'node:fs';
import {
  buildSchema,
  isObjectType,
  parse,
  specifiedRules,
  validate,
  type GraphQLError,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import {
  documentLimitRules,
  MAX_ALIASES,
  MAX_DOCUMENT_TOKENS,
  MAX_PAGE_SIZE_BY_FIELD,
  MAX_QUERY_DEPTH,
} from '../../gateway/graphql/limits.ts';

const schema = buildSchema(
  readFileSync(new URL('../../schema/payments.graphql', import.meta.url), 'utf8'),
);
const rules = [...specifiedRules, ...documentLimitRules];

/** `levels` fragments, each spreading the next `fanout` times: valid GraphQL of depth 4. */
function fanoutDocument(levels: number, fanout = 10): string {
  const fragments = Array.from({ length: levels }, (_, i) =>
    i === levels - 1
      ? `fragment F${i} on Payment { id }`
      : `fragment F${i} on Payment { ${` ...F${i + 1}`.repeat(fanout)} }`,
  );
  return `query { payments { edges { node { ...F0 } } } }\n${fragments.join('\n')}`;
}

/** Inline fragments nested `levels` deep: no depth of their own, so only the parser bounds them. */
function nestedDocument(levels: number): string {
  return `query { payment(id: "x") { ${'... on Payment { '.repeat(levels)}id${' }'.repeat(levels)} } }`;
}

function validationErrors(source: string): readonly GraphQLError[] {
  return validate(schema, parse(source, { maxTokens: MAX_DOCUMENT_TOKENS }), rules);
}

/** CPU time of validating `source` (parse excluded), the best of a few runs. */
function validationMicros(source: string): number {
  const document = parse(source, { maxTokens: MAX_DOCUMENT_TOKENS });
  let best = Infinity;
  for (let run = 0; run < 5; run++) {
    const started = process.cpuUsage();
    validate(schema, document, rules);
    const used = process.cpuUsage(started);
    best = Math.min(best, used.user + used.system);
  }
  return Math.max(best, 1);
}

/**
 * Work per byte of document at the largest size against the smallest. Linear work keeps the ratio
 * near 1; the walk that re-entered a fragment at every spread made it grow tenfold per level (a
 * thousandfold between these sizes). The bound leaves room for a noisy machine, not for growth.
 */
const LINEAR_SLACK = 8;

describe('document limits cost time linear in the document', () => {
  it('validates fragment fan-out (ten spreads a level) in time proportional to its size', () => {
    const small = fanoutDocument(4);
    const large = fanoutDocument(8);
    expect(validationErrors(large)).toEqual([]);
    const perByte = (source: string) => validationMicros(source) / source.length;
    // Warm the JIT on a mid-size document so the first measurement is not the slow one.
    validationMicros(fanoutDocument(6));
    expect(perByte(large) / perByte(small)).toBeLessThan(LINEAR_SLACK);
  });

  it('validates nested inline fragments in time proportional to their depth', () => {
    const small = nestedDocument(20);
    const large = nestedDocument(190);
    expect(validationErrors(large)).toEqual([]);
    validationMicros(nestedDocument(100));
    const perByte = (source: string) => validationMicros(source) / source.length;
    expect(perByte(large) / perByte(small)).toBeLessThan(LINEAR_SLACK);
  });

  it('still counts depth through fragments, however often they are spread', () => {
    // __Type.ofType nests without end: a chain of fragments, each one level deeper, spread twice.
    const chain = (levels: number) =>
      `query { __schema { types { ...T0 ...T0 } } }\n` +
      Array.from({ length: levels }, (_, i) =>
        i === levels - 1
          ? `fragment T${i} on __Type { name }`
          : `fragment T${i} on __Type { ofType { ...T${i + 1} ...T${i + 1} } }`,
      ).join('\n');
    // __schema, types and the last fragment's name are three levels; every other fragment adds one.
    expect(validationErrors(chain(MAX_QUERY_DEPTH - 2))).toEqual([]);
    expect(validationErrors(chain(MAX_QUERY_DEPTH - 1)).map((e) => e.message)).toEqual([
      `the document is deeper than ${MAX_QUERY_DEPTH} levels`,
    ]);
  });

  it('refuses more aliases than the limit', () => {
    const aliases = Array.from(
      { length: MAX_ALIASES + 1 },
      (_, i) => `a${i}: balances { currency }`,
    );
    const messages = validationErrors(`query { ${aliases.join(' ')} }`).map((e) => e.message);
    expect(messages).toContain(`the document has more than ${MAX_ALIASES} aliases`);
  });

  it('refuses a document over the token limit in the parser, with a syntax error', () => {
    expect(() =>
      parse(nestedDocument(MAX_DOCUMENT_TOKENS), { maxTokens: MAX_DOCUMENT_TOKENS }),
    ).toThrow(/Document contains more th\w+ 1000 tokens/);
  });

  it('knows the largest page of every paginated field, so none is counted by a guess', () => {
    const paginated = Object.values(schema.getTypeMap())
      .filter(isObjectType)
      .flatMap((type) =>
        Object.values(type.getFields())
          .filter((field) => field.args.some((a) => a.name === 'first' || a.name === 'last'))
          .map((field) => `${type.name}.${field.name}`),
      );
    expect(paginated.sort()).toEqual(Object.keys(MAX_PAGE_SIZE_BY_FIELD).sort());
  });
});
