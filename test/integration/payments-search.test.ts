import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrm, type Orm } from '../../app/orm.ts';
import { paymentPageQuery, STATUS_SCAN_FACTOR } from '../../services/payments/payment-queries.ts';
import { INSERT_PAYMENT } from '../../services/payments/payments.sql.ts';
import { errorCodeOf, graphql } from '../support/graphql-client.ts';
import { TENANT_A, testKeyring, useTestStack } from '../support/test-stack.ts';

/**
 * Query.payments by status and by a created range (docs/api.md §2). The range is a bound on the
 * tenant's created index; a status is read through the same index, at most STATUS_SCAN_FACTOR
 * rows per row asked for (no index on status: ADR 0023). Each page's cost is in proportion to
 * its size, which the plans below show: a limit over an index scan, no sort, and the rows the
 * scan actually read.
 */
const stack = useTestStack('payments-search');
let orm: Orm;

/** One payment a minute back from START, statuses in a repeating pattern, one rare status. */
const ROWS = 300;
const START = Date.parse('2026-06-01T12:00:00Z');
const STATUSES = ['SUCCEEDED', 'SUCCEEDED', 'FAILED', 'REQUIRES_CAPTURE', 'CANCELED'];
const RARE_AT = 217; // the one PROCESSING payment

interface Seeded {
  id: string;
  status: string;
  createdAt: number;
}
const seeded: Seeded[] = [];

beforeAll(async () => {
  orm = createOrm({
    databaseUrl: stack.db.options.connectionString!,
    poolMax: 2,
    applicationName: 'search-test',
  });
  for (let i = 0; i < ROWS; i++) {
    const id = randomUUID();
    const status = i === RARE_AT ? 'PROCESSING' : STATUSES[i % STATUSES.length]!;
    const createdAt = START - i * 60_000;
    await stack.db.query(INSERT_PAYMENT, [
      stack.tenantIds.a,
      id,
      '1000',
      'EUR',
      'pm_card_visa',
      'AUTOMATIC',
      i % 10 === 0 ? 'ref-tenth' : null,
      null,
      null,
      `pk_${id}`,
    ]);
    await stack.db.query(
      `UPDATE payments SET status = $3, created_at = $4 WHERE tenant_id = $1 AND id = $2`,
      [stack.tenantIds.a, id, status, new Date(createdAt)],
    );
    seeded.push({ id, status, createdAt });
  }
  await stack.db.query('ANALYZE payments');
});
afterAll(async () => {
  await orm?.close(true);
});

const SEARCH = `query($first: Int, $after: String, $status: PaymentStatus, $createdAfter: DateTime,
  $createdBefore: DateTime, $reference: String) {
  payments(first: $first, after: $after, status: $status, createdAfter: $createdAfter,
    createdBefore: $createdBefore, reference: $reference) {
    edges { cursor node { id status createdAt } }
    pageInfo { hasNextPage endCursor }
  }
}`;

interface Page {
  edges: Array<{ node: { id: string; status: string; createdAt: string } }>;
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

async function search(variables: Record<string, unknown>) {
  return graphql(stack.app.url, { apiKey: TENANT_A.apiKey, query: SEARCH, variables });
}

/** Every page of a search, in order: the ids, and how many pages it took. */
async function walk(variables: Record<string, unknown>): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let after: string | null = null;
  for (let pages = 1; pages <= 200; pages++) {
    const answer = await search({ ...variables, after });
    const page = answer.body.data?.['payments'] as Page | undefined;
    if (page === undefined) throw new Error(JSON.stringify(answer.body));
    expect(page.edges.length).toBeLessThanOrEqual(variables['first'] as number);
    ids.push(...page.edges.map((e) => e.node.id));
    if (!page.pageInfo.hasNextPage) return { ids, pages };
    after = page.pageInfo.endCursor;
  }
  throw new Error('more than 200 pages');
}

const iso = (ms: number) => new Date(ms).toISOString();

describe('Query.payments search', () => {
  it('by status: every match, newest first, none of another status', async () => {
    const { ids } = await walk({ first: 7, status: 'FAILED' });
    expect(ids).toEqual(seeded.filter((p) => p.status === 'FAILED').map((p) => p.id));
  });

  it('by a created range: createdAfter inclusive, createdBefore exclusive, with a status too', async () => {
    const after = START - 100 * 60_000;
    const before = START - 20 * 60_000;
    const inRange = seeded.filter((p) => p.createdAt >= after && p.createdAt < before);
    expect(
      (await walk({ first: 9, createdAfter: iso(after), createdBefore: iso(before) })).ids,
    ).toEqual(inRange.map((p) => p.id));
    expect(
      (
        await walk({
          first: 4,
          status: 'SUCCEEDED',
          createdAfter: iso(after),
          createdBefore: iso(before),
        })
      ).ids,
    ).toEqual(inRange.filter((p) => p.status === 'SUCCEEDED').map((p) => p.id));
  });

  it('a rare status is found by reading pages of bounded size, some of them without a match', async () => {
    const first = 5;
    const { ids, pages } = await walk({ first, status: 'PROCESSING' });
    expect(ids).toEqual([seeded[RARE_AT]!.id]);
    // Each page read at most first × STATUS_SCAN_FACTOR + 1 rows, so the walk took about
    // ROWS / that many pages: proof that no page read the whole table.
    expect(pages).toBeGreaterThanOrEqual(Math.floor(ROWS / (first * STATUS_SCAN_FACTOR + 1)));
  });

  it('refuses a range that is empty or not RFC 3339, and a status outside the enum', async () => {
    const empty = await search({
      first: 5,
      createdAfter: iso(START),
      createdBefore: iso(START - 1),
    });
    expect(errorCodeOf(empty)).toBe('BAD_USER_INPUT');
    const malformed = await search({ first: 5, createdAfter: '2026-06-01 12:00' });
    expect(errorCodeOf(malformed)).toBe('BAD_USER_INPUT');
    expect(malformed.body.errors?.[0]?.extensions?.['field']).toBe('createdAfter');
    expect(errorCodeOf(await search({ first: 5, status: 'PAID' }))).toBe('BAD_USER_INPUT');
  });
});

describe('an impossible date or time is BAD_USER_INPUT naming its argument, never a 500', () => {
  const IMPOSSIBLE = [
    ['Feb 30', '2026-02-30T00:00:00Z'],
    ['Feb 29 outside a leap year', '2025-02-29T00:00:00Z'],
    ['year 0000', '0000-01-01T00:00:00Z'],
    ['year 10000', '10000-01-01T00:00:00Z'],
    ['an instant before year 0001 in UTC', '0001-01-01T00:30:00+01:00'],
    ['month 13', '2026-13-01T00:00:00Z'],
    ['hour 24', '2026-06-01T24:00:00Z'],
    ['minute 60', '2026-06-01T12:60:00Z'],
    ['a leap second', '2026-06-30T23:59:60Z'],
    ['an offset of +24:00', '2026-06-01T00:00:00+24:00'],
    ['seven decimals of a second', '2026-06-01T00:00:00.1234567Z'],
  ];

  it.each(IMPOSSIBLE)('%s, in a variable', async (_, value) => {
    const answer = await search({ first: 5, createdAfter: value });
    expect(answer.status, JSON.stringify(answer.body)).toBe(400);
    expect(errorCodeOf(answer)).toBe('BAD_USER_INPUT');
    expect(answer.body.errors?.[0]?.extensions?.['field']).toBe('createdAfter');
  });

  it.each(IMPOSSIBLE)('%s, as a literal', async (_, value) => {
    const answer = await graphql(stack.app.url, {
      apiKey: TENANT_A.apiKey,
      query: `{ payments(first: 5, createdBefore: ${JSON.stringify(value)}) { edges { cursor } } }`,
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(400);
    expect(errorCodeOf(answer)).toBe('BAD_USER_INPUT');
    expect(answer.body.errors?.[0]?.extensions?.['field']).toBe('createdBefore');
  });

  it('takes every offset RFC 3339 allows, beyond the ±15:59 PostgreSQL takes', async () => {
    // Both instants in UTC: START, and a minute after it.
    const found = await walk({
      first: 10,
      createdAfter: '2026-06-02T11:59:00+23:59',
      createdBefore: '2026-06-01T12:01:00Z',
    });
    expect(found.ids).toEqual([seeded[0]!.id]);
  });
});

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

async function planOf(input: Record<string, unknown>): Promise<PlanNode> {
  const em = orm.em.fork();
  const { query } = paymentPageQuery(
    { em, keyring: testKeyring() },
    { tenantId: stack.tenantIds.a, first: 5, ...input },
  );
  const { rows } = await stack.db.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
    `EXPLAIN (ANALYZE, FORMAT JSON) ${query.getFormattedQuery()}`,
  );
  return rows[0]!['QUERY PLAN'][0]!.Plan;
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

describe('the plans of a page', () => {
  it('a status page: a limit over the created index, no sort, reading at most its bound', async () => {
    const plan = await planOf({ status: 'PROCESSING' });
    expect(plan['Node Type']).toBe('Limit');
    const all = nodes(plan);
    expect(all.map((n) => n['Node Type'])).not.toContain('Sort');
    const scan = all.find((n) => n['Index Name'] === 'payments_tenant_created_ix');
    expect(scan).toBeDefined();
    expect(scan!['Actual Rows']).toBeLessThanOrEqual(5 * STATUS_SCAN_FACTOR + 1);
  });

  it('a range page: the range is the index condition', async () => {
    const plan = await planOf({
      createdAfter: iso(START - 100 * 60_000),
      createdBefore: iso(START - 20 * 60_000),
    });
    const scan = nodes(plan).find((n) => n['Index Name'] === 'payments_tenant_created_ix');
    expect(scan?.['Index Cond']).toContain('created_at');
    expect(scan!['Actual Rows']).toBeLessThanOrEqual(6);
  });

  it('a reference page: the reference index, in order', async () => {
    const plan = await planOf({ reference: 'ref-tenth' });
    const all = nodes(plan);
    expect(all.map((n) => n['Node Type'])).not.toContain('Sort');
    expect(all.find((n) => n['Index Name'] === 'payments_tenant_reference_ix')).toBeDefined();
  });
});
