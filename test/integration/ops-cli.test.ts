import { beforeAll, describe, expect, it } from 'vitest';
import { errorCodeOf, paymentOf, type GraphQLAnswer } from '../support/graphql-client.ts';
import { runOpsCli, type CliRun } from '../support/ops-cli.ts';
import {
  createPaymentOn,
  INTERNAL_TOKEN,
  paymentInput,
  TENANT_A,
  useTestStack,
} from '../support/test-stack.ts';

/**
 * `npm run ops` as an operator runs it: a real child process against a running gateway over
 * HTTP. Two requests end UNKNOWN (no answer from the provider); one is resolved by hand, the
 * other settled by a reconciliation run; a sweep re-drives stuck ones past a conflict.
 */
const OPERATION = 'payments.create.v1';
/** Short provider timeout and apply window so unknown outcomes and final books come in test time. */
const PROVIDER_TIMEOUT_MS = 200;
const APPLY_WINDOW_MS = 300;
/** Until the books are final: past the apply window and the statement lag, so time must pass. */
const BOOKS_FINAL_WAIT_MS = 500;
const CHARGED_KEY = 'ops-charged-1';
const ABSENT_KEY = 'ops-absent-1';
const stack = useTestStack('ops', {
  sandbox: { blackholeMs: 60_000, statementLagMs: 50 },
  app: {
    providerTimeoutMs: PROVIDER_TIMEOUT_MS,
    unknownAfterAttempts: 1,
    // One provider call per request, so each 503 of pm_card_unavailable is left for a re-drive.
    providerMaxAttempts: 1,
    providerApplyWindowMs: APPLY_WINDOW_MS,
  },
});

beforeAll(async () => {
  for (const [key, paymentMethod] of [
    [CHARGED_KEY, 'pm_card_unknown'],
    [ABSENT_KEY, 'pm_card_unreachable'],
  ] as const) {
    const answer = await payWith(key, paymentMethod);
    if (errorCodeOf(answer) !== 'OUTCOME_PENDING')
      throw new Error(`${key}: expected OUTCOME_PENDING, got ${JSON.stringify(answer.body)}`);
  }
});

/** createPayment of 21.00 by `paymentMethod`, keyed and referenced by `key`. */
const payWith = (key: string, paymentMethod: string): Promise<GraphQLAnswer> =>
  createPaymentOn(stack, paymentInput(key, { amount: '21.00', paymentMethod }));

/** The CLI against this file's gateway. */
const ops = (args: string[], env: Record<string, string | undefined> = {}): Promise<CliRun> =>
  runOpsCli(stack.app.url, args, env);

/** The listing's detail block for one request: from its "#n" line to the next one. */
function detailOf(stdout: string, key: string): string {
  const block = stdout.split(/\n(?=#\d+ )/).find((part) => part.includes(`--key ${key}\n`));
  if (block === undefined) throw new Error(`no detail block for ${key} in:\n${stdout}`);
  return block;
}

/** The overview table's row for one request. */
function tableRowOf(stdout: string, key: string): string {
  const row = stdout.split('\n').find((line) => line.startsWith('│') && line.includes(` ${key} `));
  if (row === undefined) throw new Error(`no table row for ${key} in:\n${stdout}`);
  return row;
}

async function interventionsOf(key: string) {
  const { rows } = await stack.db.query<{ action: string; decided_by: string; reason: string }>(
    `SELECT action, decided_by, reason FROM idempotency_interventions WHERE key = $1 ORDER BY id`,
    [key],
  );
  return rows;
}

async function stateOf(key: string): Promise<string | undefined> {
  const { rows } = await stack.db.query<{ state: string }>(
    'SELECT state FROM idempotency_keys WHERE key = $1',
    [key],
  );
  return rows[0]?.state;
}

describe('ops CLI', () => {
  it('list --state unknown shows both unknown requests, their phase, and no secret', async () => {
    const run = await ops(['list', '--state', 'unknown']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^2 unfinished requests/);
    for (const key of [CHARGED_KEY, ABSENT_KEY]) {
      const row = tableRowOf(run.stdout, key);
      expect(row).toMatch(/│ unknown +│ provider_charge_sent +│ 1 +│ timeout, \d+s ago +│ none +│/);
      expect(row).toContain(`│ ${stack.tenantIds.a.slice(0, 8)} `);
      const detail = detailOf(run.stdout, key);
      expect(detail).toMatch(
        /^ {2}phase +provider_charge_sent +token \d+ +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(\d+s ago\)$/m,
      );
      expect(detail).toContain(`--tenant ${stack.tenantIds.a} --operation ${OPERATION}`);
      expect(detail).toContain('action   none yet');
    }
    expect(run.stdout).not.toContain(INTERNAL_TOKEN);
    expect(run.stdout).not.toContain(TENANT_A.apiKey);
  });

  it('list --state started says so when nothing is stuck', async () => {
    const run = await ops(['list', '--state', 'started']);
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe('nothing stuck or unknown');
  });

  it('resolve --outcome charged settles the unknown payment with the provider charge', async () => {
    const chargeId = stack.sandbox.charges({ reference: CHARGED_KEY })[0]?.id;
    expect(chargeId).toEqual(expect.any(String));
    const args = [
      'resolve',
      '--tenant',
      stack.tenantIds.a,
      '--operation',
      OPERATION,
      '--key',
      CHARGED_KEY,
      '--outcome',
      'charged',
      '--provider-reference',
      String(chargeId),
      '--reason',
      'checked the PSP dashboard',
      '--actor',
      'alice',
    ];
    const run = await ops(args);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`as charged (charge ${chargeId}): now finished`);

    const retry = await payWith(CHARGED_KEY, 'pm_card_unknown');
    expect(paymentOf(retry)).toMatchObject({ status: 'SUCCEEDED', providerReference: chargeId });
    expect(await interventionsOf(CHARGED_KEY)).toEqual([
      {
        action: 'resolved_charged',
        decided_by: 'operator:alice',
        reason: 'checked the PSP dashboard',
      },
    ]);

    // Resolving a finished request again is refused by the gateway: code, message, exit 1.
    const again = await ops(args);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('CONFLICT (HTTP 409): only an unknown outcome can be resolved');
    expect(await interventionsOf(CHARGED_KEY)).toHaveLength(1);
  });

  it('reconcile with final books settles the unreachable payment as absent', async () => {
    // The books are final only once a late charge would be in them (apply window + lag).
    await new Promise((resolve) => setTimeout(resolve, BOOKS_FINAL_WAIT_MS));
    const run = await ops(['reconcile', '--actor', 'bob']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/│ examined +│ 1 │/);
    expect(run.stdout).toMatch(/│ charge found \(completed\) +│ 0 │/);
    expect(run.stdout).toMatch(/│ charge absent \(failed\) +│ 1 │/);
    expect(run.stdout).toMatch(/│ undecided \(still unknown\) +│ 0 │/);

    const retry = await payWith(ABSENT_KEY, 'pm_card_unreachable');
    expect(paymentOf(retry)).toMatchObject({
      status: 'FAILED',
      failureCode: 'PROVIDER_CHARGE_ABSENT',
    });
    expect(await interventionsOf(ABSENT_KEY)).toEqual([
      expect.objectContaining({
        action: 'reconciled_charge_absent',
        decided_by: 'reconciliation (run by operator:bob)',
      }),
    ]);
  });

  it('redrive-all on an empty set prints a summary of zeros', async () => {
    const run = await ops(['redrive-all', '--state', 'unknown', '--reason', 'after the outage']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('0 unknown request(s) to re-drive');
    for (const name of ['re-driven', 'now finished', 'still unfinished', 'conflicts', 'errors'])
      expect(run.stdout).toMatch(new RegExp(`│ ${name} +│ 0 │`));
    expect(run.stdout).not.toContain('progress');
  });

  it('redrive-all re-drives stuck requests one by one, counting a live lease as a conflict', async () => {
    // Refused (503) by the provider: left started, lease released, for the next attempt.
    const refusedOnce = ['ops-sweep-stays', 'ops-sweep-leased'];
    for (const key of [...refusedOnce, 'ops-sweep-finishes', 'ops-sweep-finishes']) {
      expect(errorCodeOf(await payWith(key, 'pm_card_unavailable'))).toBe('PROVIDER_UNAVAILABLE');
    }
    // As if its owner were still working on it.
    await stack.db.query(
      `UPDATE idempotency_keys SET lease_expires_at = now() + interval '1 hour' WHERE key = $1`,
      ['ops-sweep-leased'],
    );

    const run = await ops(['redrive-all', '--reason', 'provider back up', '--actor', 'carol']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('3 started request(s) to re-drive');
    // Not a terminal: one line per tenth done, no redrawn bar.
    expect(run.stdout).toMatch(/^progress 100% \(3\/3\): 2 re-driven, 1 conflicts, 0 errors$/m);
    expect(run.stdout).not.toContain('\r');
    expect(run.stdout).toMatch(/│ re-driven +│ 2 │/);
    expect(run.stdout).toMatch(/│ now finished +│ 1 │/);
    expect(run.stdout).toMatch(/│ still unfinished +│ 1 │/);
    expect(run.stdout).toMatch(/│ conflicts +│ 1 │/);
    expect(run.stdout).toMatch(/│ errors +│ 0 │/);
    expect(run.stdout).toMatch(/ops-sweep-leased .*: CONFLICT \(HTTP 409\): .*live lease/);

    expect(await stateOf('ops-sweep-finishes')).toBe('finished');
    expect(await stateOf('ops-sweep-stays')).toBe('started');
    expect(await interventionsOf('ops-sweep-stays')).toEqual([
      { action: 'redriven', decided_by: 'operator:carol', reason: 'provider back up' },
    ]);
    expect(await interventionsOf('ops-sweep-leased')).toEqual([]);
  });

  it('redrive re-drives one request by its scope and says where it stands', async () => {
    const key = 'ops-one-redrive';
    // pm_card_unavailable: refused (503) on a key's first two attempts, approved on the third.
    expect(errorCodeOf(await payWith(key, 'pm_card_unavailable'))).toBe('PROVIDER_UNAVAILABLE');
    const redrive = () =>
      ops([
        'redrive',
        '--tenant',
        stack.tenantIds.a,
        '--operation',
        OPERATION,
        '--key',
        key,
        '--reason',
        'provider back up',
        '--actor',
        'dave',
      ]);
    const refused = await redrive();
    expect(refused.stderr).toBe('');
    expect(refused.stdout).toContain(`re-driven ${OPERATION} ${key}`);
    expect(refused.stdout).toMatch(/now started\nstill unfinished/);
    const approved = await redrive();
    expect(approved.code).toBe(0);
    expect(approved.stdout).toMatch(/now finished$/m);
    expect(await stateOf(key)).toBe('finished');
    expect(await interventionsOf(key)).toHaveLength(2);
  });

  it('takes --tenant by name as by id: the same listing, the same guard', async () => {
    const byName = await ops(['api-keys', 'list', '--tenant', TENANT_A.name]);
    const byId = await ops(['api-keys', 'list', '--tenant', stack.tenantIds.a]);
    expect([byName.code, byName.stderr]).toEqual([0, '']);
    expect(byId.stdout).toBe(byName.stdout);
    expect(byName.stdout).toContain(TENANT_A.apiKey.slice(0, 12));
    const guard = await ops(['reference-guard', 'show', '--tenant', stack.tenantIds.a]);
    expect(guard.stdout.trim()).toBe(`reference guard of ${TENANT_A.name}: off`);
    // Past the tenant to the request: a name reaches the procedures that take an id.
    const target = ['--operation', OPERATION, '--key', 'ops-no-such-key', '--reason', 'checking'];
    const redriven = await ops(['redrive', '--tenant', TENANT_A.name, ...target]);
    expect([redriven.code, redriven.stderr.trim()]).toEqual([
      1,
      'ops redrive failed: NOT_FOUND (HTTP 404): no such request',
    ]);
  });

  it.each(['nosuch', '00000000-0000-4000-8000-00000000dead'])(
    'an unknown --tenant (%s) is one line on stderr and exit 2, in every command taking one',
    async (tenant) => {
      const target = ['--operation', OPERATION, '--key', 'k', '--reason', 'checking'];
      const commands = [
        ['api-keys', 'create', '--tenant', tenant],
        ['api-keys', 'list', '--tenant', tenant],
        ['api-keys', 'revoke', '--tenant', tenant, '--id', '00000000-0000-4000-8000-000000000001'],
        ['reference-guard', 'show', '--tenant', tenant],
        ['reference-guard', 'on', '--tenant', tenant],
        ['redrive', '--tenant', tenant, ...target],
        ['resolve', '--tenant', tenant, ...target, '--outcome', 'not_charged'],
      ];
      const runs = await Promise.all(commands.map((args) => ops(args)));
      for (const [index, run] of runs.entries()) {
        expect({ command: commands[index]?.slice(0, 2), ...run }).toEqual({
          command: commands[index]?.slice(0, 2),
          code: 2,
          stdout: '',
          stderr: `ops: no such tenant: ${tenant}\n`,
        });
      }
    },
  );

  it('refuses to run without INTERNAL_TOKEN, saying so', async () => {
    const run = await ops(['list'], { INTERNAL_TOKEN: undefined });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('INTERNAL_TOKEN is not set');
    expect(run.stdout).toBe('');
  });

  it('a wrong token exits 1 with UNAUTHORIZED (401) and does not echo the token', async () => {
    const run = await ops(['list'], { INTERNAL_TOKEN: 'itok_wrong_1234567890' });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      `ops list failed: UNAUTHORIZED (HTTP 401): the gateway at ${stack.app.url} refused INTERNAL_TOKEN`,
    );
    expect(run.stderr).not.toContain('itok_wrong_1234567890');
  });

  it('an unknown command prints the usage and exits 2; --help exits 0', async () => {
    const unknown = await ops(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command: frobnicate');
    expect(unknown.stderr).toContain('Usage: npm run ops -- <command>');
    const help = await ops(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('redrive-all [--state started|unknown] --reason');
  });
});
