import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import {
  buildSchema,
  getNamedType,
  isObjectType,
  type GraphQLField,
  type GraphQLObjectType,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOG } from '../../app/error-catalog.ts';
import { graphql, type GraphQLAnswer } from '../support/graphql-client.ts';
import { CREATE_PAYMENT } from '../support/operations.ts';
import { countRows, TENANT_A, useTestStack } from '../support/test-stack.ts';

/**
 * Seeded fuzzing of the public edge: generated inputs and documents, each sent to a real gateway.
 * A failure prints fast-check's seed and path; FUZZ_SEED=N replays that run.
 */
const SEED = Number(process.env['FUZZ_SEED'] ?? 20_261_204);
const INPUT_RUNS = 1_500;
const DOCUMENT_RUNS = 1_500;
const DATE_RUNS = 600;
const CARD_RUNS = 600;

const schema = buildSchema(
  readFileSync(new URL('../../schema/payments.graphql', import.meta.url), 'utf8'),
);

const stack = useTestStack('edge_fuzz');

/** Codes a client may see: the catalog's, and the ones Apollo gives a refused document. */
const KNOWN_CODES = new Set<string>([
  ...Object.keys(ERROR_CATALOG),
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_REQUEST',
  'OPERATION_RESOLUTION_FAILURE',
]);
/** Text that belongs to the server's insides: SQL, driver and runtime errors. */
const LEAK =
  /relation "|column "|violates|invalid input syntax|SQLSTATE|at character|TypeError|ReferenceError|Cannot read|undefined is not|stack|node_modules|\.ts:\d/i;

/** The answer is a client's answer: no 500, every error coded, nothing from the insides. */
function expectClientAnswer(answer: GraphQLAnswer, sent: unknown): void {
  const context = JSON.stringify({ sent, status: answer.status, body: answer.body }).slice(
    0,
    2_000,
  );
  expect(answer.status, context).not.toBe(500);
  for (const error of answer.body.errors ?? []) {
    const code = error.extensions?.['code'];
    expect(typeof code === 'string' && KNOWN_CODES.has(code), context).toBe(true);
    expect(code, context).not.toBe('INTERNAL_SERVER_ERROR');
    expect(error.message, context).not.toMatch(LEAK);
  }
}

// --- inputs -------------------------------------------------------------------------------

/** Half of a UTF-16 surrogate pair: a JavaScript string may hold one alone, UTF-8 cannot. */
const SURROGATE_HALF = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
/** One unit of text: usually a character, sometimes half a pair (alone, or meeting another). */
const UNIT_WITH_HALVES = fc.oneof(
  { weight: 4, arbitrary: fc.string({ minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: SURROGATE_HALF },
);
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether any string in `value`, a key or a value at any depth, holds a lone surrogate. */
function holdsLoneSurrogate(value: unknown): boolean {
  if (typeof value === 'string') return LONE_SURROGATE.test(value);
  if (Array.isArray(value)) return value.some(holdsLoneSurrogate);
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).some(([k, v]) => LONE_SURROGATE.test(k) || holdsLoneSurrogate(v));
  }
  return false;
}

/** Input that JSON (and so PostgreSQL) cannot hold is refused with a code, and makes nothing. */
function expectRefusedIfMalformed(answer: GraphQLAnswer, sent: Record<string, unknown>): void {
  if (!holdsLoneSurrogate(sent)) return;
  const context = JSON.stringify({ sent, body: answer.body }).slice(0, 2_000);
  const root = Object.values(answer.body.data ?? {})[0];
  expect(root ?? null, context).toBeNull();
  const code = answer.body.errors?.[0]?.extensions?.['code'];
  expect(['BAD_USER_INPUT', 'IDEMPOTENCY_KEY_INVALID'], context).toContain(code);
}

const PAN = fc.constantFrom('4242424242424242', '4000 0566 5566 5556', '378282246310005');
/** Ways to write a card's digits: other digit sets, and anything between them. */
const DIGIT_SETS = { ascii: 0x30, fullWidth: 0xff10, arabicIndic: 0x660, devanagari: 0x966 };
const SEPARATORS = ['', ' ', '  ', '-', ' - ', '.', '/', ' / ', '_', '\u200b', '\u00a0'];
/** A test card written as a person or a careless form might: any grouping, any separators. */
const PAN_FORM = fc
  .tuple(
    fc.constantFrom('4111111111111111', '4242424242424242', '378282246310005', '6011111111111117'),
    fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 19 }),
    fc.constantFrom(...SEPARATORS),
    fc.constantFrom(...Object.values(DIGIT_SETS)),
    fc.constantFrom('', 'pm_', 'card ', 'ref-'),
  )
  .map(([digits, sizes, separator, zero, prefix]) => {
    const written = [...digits].map((d) => String.fromCodePoint(zero + Number(d))).join('');
    const groups: string[] = [];
    for (let at = 0, i = 0; at < written.length; i++) {
      const size = sizes[i % sizes.length]!;
      groups.push(written.slice(at, at + size));
      at += size;
    }
    return `${prefix}${groups.join(separator)}`;
  });
const CONTROL = fc.integer({ min: 0, max: 31 }).map((c) => String.fromCharCode(c));
/** Text a hostile or careless client sends: controls, card numbers, unicode, long runs. */
const hostileText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc
    .tuple(fc.string({ maxLength: 10 }), CONTROL, fc.string({ maxLength: 10 }))
    .map((p) => p.join('')),
  fc.tuple(fc.string({ maxLength: 10 }), PAN).map((p) => p.join(' ')),
  PAN_FORM,
  fc.stringMatching(/^[0-9 -]{10,30}$/),
  fc.constant('x'.repeat(2_000)),
  fc.string({ unit: UNIT_WITH_HALVES, maxLength: 12 }),
);
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const keyArb = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9._:-]{1,40}$/),
  hostileText,
  fc.constant(''),
  fc.constant('k'.repeat(256)),
);
const amountArb = fc.oneof(
  fc.constantFrom(
    '10.00',
    '0.01',
    '1',
    '0',
    '-5',
    '1e3',
    '10.005',
    ' 7.5 ',
    '99999999999999999999',
  ),
  fc.double().map(String),
  hostileText,
);
const currencyArb = fc.oneof(
  fc.constantFrom('EUR', 'usd', 'JPY', 'KWD', 'XXX', 'XTS'),
  hostileText,
);
const methodArb = fc.oneof(
  fc.constantFrom('pm_card_visa', 'pm_card_declined', 'pm_card_mastercard', 'pm_nope'),
  fc.stringMatching(/^pm_[A-Za-z0-9_]{1,20}$/),
  hostileText,
);
const metadataArb = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.dictionary(hostileText, hostileText, { maxKeys: 4 }),
  // Nested objects and arrays whose keys and strings may hold half a surrogate pair.
  fc.dictionary(hostileText, fc.jsonValue({ maxDepth: 4, stringUnit: UNIT_WITH_HALVES }), {
    maxKeys: 4,
  }),
  fc.constant(null),
);

/**
 * Mostly valid commands with a field or two replaced: a wholly random command fails on its first
 * field, and the rules for the later ones (and what PostgreSQL does with them) go untried.
 */
/** One field in four is replaced: most commands then fail on one rule, the one under test. */
const sometimes = <T>(arb: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });
const createOverrides = fc.record(
  {
    idempotencyKey: sometimes(keyArb),
    amount: sometimes(amountArb),
    currency: sometimes(currencyArb),
    paymentMethod: sometimes(methodArb),
    captureMethod: sometimes(fc.constantFrom('AUTOMATIC', 'MANUAL', 'SOMETIMES')),
    reference: sometimes(hostileText),
    description: sometimes(hostileText),
    metadata: sometimes(metadataArb),
  },
  { requiredKeys: [] },
);
const operationOverrides = fc.record(
  {
    idempotencyKey: sometimes(keyArb),
    paymentId: sometimes(fc.oneof(fc.uuid(), hostileText)),
    amount: sometimes(amountArb),
    reason: sometimes(hostileText),
  },
  { requiredKeys: [] },
);

/** Drops the fields an override left undefined, so the base's value stands. */
function merged(base: Record<string, unknown>, overrides: Record<string, unknown>) {
  const defined = Object.entries(overrides).filter(([, v]) => v !== undefined);
  return { ...base, ...Object.fromEntries(defined) };
}

const OPERATIONS = {
  capturePayment: 'CapturePaymentInput',
  refundPayment: 'RefundPaymentInput',
  cancelPayment: 'CancelPaymentInput',
} as const;

describe('generated inputs', () => {
  it('never answer 500, never leak, and never charge for a refused command', async () => {
    const charged = new Set<string>();
    let run = 0;
    const knownIds: string[] = [];
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          createOverrides.map((overrides) => ({ kind: 'create' as const, overrides })),
          fc
            .tuple(
              fc.constantFrom(...(Object.keys(OPERATIONS) as Array<keyof typeof OPERATIONS>)),
              operationOverrides,
            )
            .map(([name, overrides]) => ({ kind: 'operation' as const, name, overrides })),
          fc
            .record({ idempotencyKey: keyArb, url: fc.oneof(fc.webUrl(), hostileText) })
            .map((input) => ({ kind: 'webhook' as const, input })),
        ),
        async (request) => {
          run += 1;
          if (request.kind === 'create') {
            const input = merged(
              {
                idempotencyKey: `fuzz-${run}`,
                amount: '10.00',
                currency: 'EUR',
                paymentMethod: 'pm_card_visa',
              },
              request.overrides,
            );
            const before = stack.sandbox.charges().length;
            const answer = await graphql(stack.app.url, {
              apiKey: TENANT_A.apiKey,
              query: CREATE_PAYMENT,
              variables: { input },
            });
            expectClientAnswer(answer, input);
            expectRefusedIfMalformed(answer, input);
            const payment = (
              answer.body.data?.['createPayment'] as { payment?: { id: string } } | null
            )?.payment;
            const after = stack.sandbox.charges().length;
            if (payment === undefined) expect(after, JSON.stringify(input)).toBe(before);
            else {
              knownIds.push(payment.id);
              if (!charged.has(payment.id)) expect(after - before).toBeLessThanOrEqual(1);
              charged.add(payment.id);
            }
            return;
          }
          if (request.kind === 'webhook') {
            const answer = await graphql(stack.app.url, {
              apiKey: TENANT_A.apiKey,
              query: `mutation($input: RegisterWebhookEndpointInput!) { registerWebhookEndpoint(input: $input) { endpoint { id } } }`,
              variables: { input: request.input },
            });
            expectClientAnswer(answer, request);
            return;
          }
          const input = merged(
            {
              idempotencyKey: `fuzz-${run}`,
              paymentId: knownIds.at(-1) ?? '00000000-0000-4000-8000-000000000000',
              ...(request.name === 'refundPayment' ? { amount: '1.00' } : {}),
            },
            request.overrides,
          );
          if (request.name === 'cancelPayment') delete input['amount'];
          if (request.name !== 'refundPayment') delete input['reason'];
          const before = stack.sandbox.charges().length;
          const answer = await graphql(stack.app.url, {
            apiKey: TENANT_A.apiKey,
            query: `mutation($input: ${OPERATIONS[request.name]}!) { ${request.name}(input: $input) { payment { id status } } }`,
            variables: { input },
          });
          expectClientAnswer(answer, { name: request.name, input });
          expectRefusedIfMalformed(answer, input);
          expect(stack.sandbox.charges().length).toBe(before);
        },
      ),
      { seed: SEED, numRuns: INPUT_RUNS },
    );
    // Every charge belongs to a payment the gateway answered with: nothing refused was charged.
    expect(stack.sandbox.charges().length).toBe(charged.size);
  }, 300_000);
});

// --- dates --------------------------------------------------------------------------------

/** A date-time's parts, near and past every edge, and the ways one is written. */
const dateParts = fc.record({
  year: fc.constantFrom(0, 1, 999, 2024, 2025, 2026, 9999, 10_000),
  month: fc.integer({ min: 0, max: 13 }),
  day: fc.integer({ min: 0, max: 32 }),
  hour: fc.integer({ min: 0, max: 25 }),
  minute: fc.integer({ min: 0, max: 61 }),
  second: fc.integer({ min: 0, max: 61 }),
  fraction: fc.option(fc.stringMatching(/^\d{1,8}$/), { nil: undefined }),
  separator: fc.constantFrom('T', 't', ' '),
  zone: fc.constantFrom(
    'Z',
    'z',
    '+00:00',
    '-00:00',
    '+05:30',
    '-09:30',
    '+15:59',
    '+16:00',
    '+23:59',
    '+24:00',
    '-24:00',
    '+01:60',
    '',
  ),
});
type DateParts = typeof dateParts extends fc.Arbitrary<infer T> ? T : never;

const pad = (n: number, width: number) => String(n).padStart(width, '0');
const writtenDate = (d: DateParts) =>
  `${pad(d.year, 4)}-${pad(d.month, 2)}-${pad(d.day, 2)}${d.separator}` +
  `${pad(d.hour, 2)}:${pad(d.minute, 2)}:${pad(d.second, 2)}` +
  `${d.fraction === undefined ? '' : `.${d.fraction}`}${d.zone}`;

/** Whether the parts name a date and time by the calendar's own rules, in RFC 3339's form. */
function possibleDate(d: DateParts): boolean {
  const leap = d.year % 4 === 0 && (d.year % 100 !== 0 || d.year % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][d.month - 1];
  const offset = /^[+-](\d\d):(\d\d)$/.exec(d.zone);
  return (
    d.year >= 1 &&
    d.year <= 9_999 &&
    days !== undefined &&
    d.day >= 1 &&
    d.day <= days &&
    d.hour <= 23 &&
    d.minute <= 59 &&
    d.second <= 59 &&
    (d.fraction?.length ?? 0) <= 6 &&
    d.separator !== ' ' &&
    d.zone !== '' &&
    (offset === null || (Number(offset[1]) <= 23 && Number(offset[2]) <= 59))
  );
}

describe('generated dates and times', () => {
  it('are answered, or refused as BAD_USER_INPUT naming the argument, never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(dateParts, fc.boolean(), async (parts, asVariable) => {
        const text = writtenDate(parts);
        const answer = await graphql(stack.app.url, {
          apiKey: TENANT_A.apiKey,
          query: asVariable
            ? 'query($at: DateTime) { payments(first: 1, createdAfter: $at) { edges { cursor } } }'
            : `{ payments(first: 1, createdAfter: ${JSON.stringify(text)}) { edges { cursor } } }`,
          variables: asVariable ? { at: text } : undefined,
        });
        expectClientAnswer(answer, text);
        const context = JSON.stringify({ text, asVariable, body: answer.body });
        if (!possibleDate(parts)) {
          expect(answer.status, context).toBe(400);
          expect(answer.body.errors?.[0]?.extensions, context).toMatchObject({
            code: 'BAD_USER_INPUT',
            field: 'createdAfter',
          });
        } else if (parts.year > 1 && parts.year < 9_999) {
          // Years 0001 and 9999 may leave the range in UTC; the rest are always answered.
          expect(answer.status, context).toBe(200);
        }
      }),
      { seed: SEED + 2, numRuns: DATE_RUNS },
    );
  }, 300_000);
});

// --- card numbers -------------------------------------------------------------------------

const keyCount = () => countRows(stack.db, 'idempotency_keys');

const CARD_FIELDS = [
  'idempotencyKey',
  'paymentMethod',
  'reference',
  'description',
  'metadata value',
  'metadata key',
] as const;

/** A createPayment with `pan` in `field`, and nothing else wrong with it. */
function inputWithCard(field: (typeof CARD_FIELDS)[number], pan: string, run: number) {
  const input: Record<string, unknown> = {
    idempotencyKey: `card-${run}`,
    amount: '10.00',
    currency: 'EUR',
    paymentMethod: 'pm_card_visa',
  };
  if (field === 'metadata value') input['metadata'] = { note: pan };
  else if (field === 'metadata key') input['metadata'] = { [pan]: 'x' };
  else input[field] = pan;
  return input;
}

describe('generated card numbers', () => {
  it('are refused in any form and any text, and leave nothing behind', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...CARD_FIELDS), PAN_FORM, async (field, pan) => {
        run += 1;
        const input = inputWithCard(field, pan, run);
        const [charges, keys] = [stack.sandbox.charges().length, await keyCount()];
        const answer = await graphql(stack.app.url, {
          apiKey: TENANT_A.apiKey,
          query: CREATE_PAYMENT,
          variables: { input },
        });
        expectClientAnswer(answer, input);
        const context = JSON.stringify({ input, body: answer.body });
        expect(answer.body.data?.['createPayment'] ?? null, context).toBeNull();
        expect(['BAD_USER_INPUT', 'IDEMPOTENCY_KEY_INVALID'], context).toContain(
          answer.body.errors?.[0]?.extensions?.['code'],
        );
        expect(stack.sandbox.charges().length).toBe(charges);
        expect(await keyCount()).toBe(keys);
      }),
      { seed: SEED + 3, numRuns: CARD_RUNS },
    );
  }, 300_000);
});

// --- documents ----------------------------------------------------------------------------

const nameArb = fc.stringMatching(/^[_A-Za-z][_A-Za-z0-9]{0,12}$/);
const literalArb: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string({ maxLength: 20 }).map((s) => JSON.stringify(s)),
    fc.integer().map(String),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
    fc.constantFrom('true', 'false', 'null', 'AUTOMATIC', 'MANUAL', '$input', '$x'),
    fc.array(tie('value'), { maxLength: 3 }).map((items) => `[${items.join(', ')}]`),
    fc
      .array(fc.tuple(nameArb, tie('value')), { maxLength: 4 })
      .map((fields) => `{ ${fields.map(([k, v]) => `${k}: ${v}`).join(', ')} }`),
  ),
})).value;

/** A selection set drawn from the schema's fields (and some it lacks), `depth` levels down. */
function selectionArb(type: GraphQLObjectType, depth: number): fc.Arbitrary<string> {
  const fields = Object.values(type.getFields()) as Array<GraphQLField<unknown, unknown>>;
  const field = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...fields) },
    { weight: 1, arbitrary: nameArb.map((name) => ({ name, type: null })) },
  );
  return fc
    .array(
      fc.tuple(field, maybe(nameArb)).chain(([f, alias]) => {
        const named = f.type === null ? null : getNamedType(f.type);
        const prefix = alias === undefined ? f.name : `${alias}: ${f.name}`;
        if (named !== null && isObjectType(named) && depth > 0)
          return selectionArb(named, depth - 1).map((inner) => `${prefix} { ${inner} }`);
        return fc.constant(prefix);
      }),
      { minLength: 1, maxLength: 4 },
    )
    .map((parts) => parts.join(' '));
}

const rootArb = fc.constantFrom('query', 'mutation').chain((operation) => {
  const root = operation === 'query' ? schema.getQueryType()! : schema.getMutationType()!;
  const fields = Object.values(root.getFields());
  return fc
    .array(
      fc
        .tuple(
          fc.oneof(
            { weight: 5, arbitrary: fc.constantFrom(...fields.map((f) => f.name)) },
            nameArb,
          ),
          fc.array(
            fc.tuple(
              fc.constantFrom('input', 'id', 'first', 'after', 'reference', 'x'),
              literalArb,
            ),
            {
              maxLength: 3,
            },
          ),
        )
        .chain(([name, args]) => {
          const field = root.getFields()[name];
          const named = field === undefined ? null : getNamedType(field.type);
          const argText =
            args.length === 0 ? '' : `(${args.map(([k, v]) => `${k}: ${v}`).join(', ')})`;
          const selection =
            named !== null && isObjectType(named)
              ? selectionArb(named, 3).map((s) => ` { ${s} }`)
              : fc.constant('');
          return selection.map((s) => `${name}${argText}${s}`);
        }),
      { minLength: 1, maxLength: 3 },
    )
    .map((fields) => `${operation} { ${fields.join(' ')} }`);
});

const documentArb = fc.oneof(
  { weight: 8, arbitrary: rootArb },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
  { weight: 1, arbitrary: rootArb.map((d) => d.slice(0, Math.floor(d.length / 2))) },
);

describe('generated documents', () => {
  it('never answer 500 and never leak', async () => {
    await fc.assert(
      fc.asyncProperty(
        documentArb,
        fc.option(fc.jsonValue({ maxDepth: 2 })),
        async (query, variables) => {
          const answer = await graphql(stack.app.url, {
            apiKey: TENANT_A.apiKey,
            query,
            variables:
              variables !== null && typeof variables === 'object' && !Array.isArray(variables)
                ? variables
                : undefined,
          });
          expectClientAnswer(answer, { query, variables });
        },
      ),
      { seed: SEED + 1, numRuns: DOCUMENT_RUNS },
    );
  }, 300_000);
});
