import { z } from 'zod';
import type { Command, Target, UnfinishedState } from './args.ts';
import { withDeadline, type GatewayConfig, type OpsClient, type TenantsClient } from './client.ts';
import { age, clean, reportTable, shortId, table, timestamp, truncateMiddle } from './render.ts';
import { resolveTenant } from './tenant-ref.ts';

/** What every command runs with; no globals, so each run (and each test) is self-contained. */
export interface Context {
  ops: OpsClient;
  tenants: TenantsClient;
  config: GatewayConfig;
  print(line: string): void;
  now(): number;
  /** True when stdout is a terminal a person watches (progress bar), false for logs and pipes. */
  interactive: boolean;
}

const KEY_COLUMN_CHARS = 24;

/**
 * The listing's procedure is typed as loose records. Checked here so a renamed column shows up
 * as one clear error instead of "undefined" cells an operator might act on.
 */
const unfinishedRowSchema = z.object({
  tenant_id: z.string(),
  operation: z.string(),
  key: z.string(),
  state: z.string(),
  recovery_point: z.string(),
  resource_id: z.string().nullable(),
  fencing_token: z.union([z.string(), z.number()]).transform(String),
  attempts: z.number(),
  last_attempt_at: z.string().nullable(),
  last_attempt_outcome: z.string().nullable(),
  lease_expires_at: z.string().nullable(),
  lease_expired: z.boolean().nullable(),
  next_attempt_at: z.string().nullable(),
  created_at: z.string(),
  phases: z.array(
    z.object({
      recoveryPoint: z.string(),
      fencingToken: z.union([z.string(), z.number()]).transform(String),
      committedAt: z.string(),
    }),
  ),
  interventions: z.array(
    z.object({
      action: z.string(),
      decidedBy: z.string(),
      reason: z.string(),
      decidedAt: z.string(),
    }),
  ),
});
export type UnfinishedRow = z.infer<typeof unfinishedRowSchema>;

export async function fetchUnfinished(
  ctx: Context,
  query: { states: UnfinishedState[]; limit: number },
): Promise<UnfinishedRow[]> {
  // Only the procedure's own fields: it refuses any other (a command's `name`, say).
  const input = { states: query.states, limit: query.limit };
  const rows = await withDeadline((options) => ctx.ops.listUnfinished.query(input, options));
  const parsed = z.array(unfinishedRowSchema).safeParse(rows);
  if (!parsed.success) {
    throw new Error(
      `the gateway's ops.listUnfinished answered in a shape this tool does not know (is the tool older than the gateway?): ${z.prettifyError(parsed.error)}`,
    );
  }
  return parsed.data;
}

export async function list(
  ctx: Context,
  command: Extract<Command, { name: 'list' }>,
): Promise<void> {
  const rows = await fetchUnfinished(ctx, command);
  if (rows.length === 0) {
    ctx.print('nothing stuck or unknown');
    return;
  }
  const now = ctx.now();
  const full = rows.length === command.limit ? ` (first ${command.limit}; raise --limit)` : '';
  ctx.print(
    `${rows.length} unfinished request${rows.length === 1 ? '' : 's'}, oldest first${full}`,
  );
  const overview = table([
    '#',
    'tenant',
    'operation',
    'key',
    'state',
    'recovery point',
    'attempts',
    'last attempt',
    'lease',
  ]);
  rows.forEach((row, index) => {
    overview.push([
      String(index + 1),
      shortId(row.tenant_id),
      clean(row.operation, 40),
      truncateMiddle(row.key, KEY_COLUMN_CHARS),
      clean(row.state, 20),
      clean(row.recovery_point, 40),
      String(row.attempts),
      lastAttempt(row, now),
      lease(row, now),
    ]);
  });
  ctx.print(overview.toString());
  rows.forEach((row, index) => {
    ctx.print('');
    ctx.print(`#${index + 1} ${clean(row.state, 20)}, created ${age(row.created_at, now)}`);
    // The whole target, ready to paste into redrive/resolve: the table only shows short forms.
    ctx.print(
      `  target   --tenant ${clean(row.tenant_id, 40)} --operation ${clean(row.operation, 100)} --key ${clean(row.key, 255)}`,
    );
    // The provider knows the charge by this payment (its key derives from the payment id).
    if (row.resource_id !== null) ctx.print(`  payment  ${clean(row.resource_id, 40)}`);
    if (row.next_attempt_at !== null && row.state === 'started') {
      const due = Date.parse(row.next_attempt_at) <= now;
      ctx.print(
        due
          ? `  next     due for the recovery worker since ${age(row.next_attempt_at, now)}`
          : `  next     recovery worker retries it ${age(row.next_attempt_at, now)}`,
      );
    }
    if (row.phases.length === 0) ctx.print('  phase    none committed');
    for (const phase of row.phases) {
      ctx.print(
        `  phase    ${clean(phase.recoveryPoint, 40)}  token ${clean(phase.fencingToken, 20)}  ${timestamp(phase.committedAt)} (${age(phase.committedAt, now)})`,
      );
    }
    if (row.interventions.length === 0) ctx.print('  action   none yet');
    for (const action of row.interventions) {
      ctx.print(
        `  action   ${clean(action.action, 40)} by ${clean(action.decidedBy, 120)}  ${timestamp(action.decidedAt)} (${age(action.decidedAt, now)}): ${clean(action.reason)}`,
      );
    }
  });
}

function lastAttempt(row: UnfinishedRow, now: number): string {
  if (row.last_attempt_at === null) return 'none';
  const outcome = row.last_attempt_outcome === null ? '?' : clean(row.last_attempt_outcome, 20);
  return `${outcome}, ${age(row.last_attempt_at, now)}`;
}

/**
 * Whether an owner may still be working on it. The database decides expiry (its clock is the
 * one the lease was written with); only the remaining time is shown from this machine's clock.
 */
function lease(row: UnfinishedRow, now: number): string {
  if (row.lease_expires_at === null) return 'none';
  if (row.lease_expired === true) return `expired ${age(row.lease_expires_at, now)}`;
  if (row.state !== 'started') return 'none';
  return `live, ends ${age(row.lease_expires_at, now)}`;
}

export async function redrive(ctx: Context, target: Target): Promise<void> {
  const { operation, key, actor, reason } = target;
  const { id: tenantId } = await resolveTenant(ctx, target.tenant);
  const input = { tenantId, operation, key, actor, reason };
  const { state } = await withDeadline((options) => ctx.ops.redrive.mutate(input, options));
  ctx.print(`re-driven ${describeTarget(input)}: now ${clean(state, 20)}`);
  if (state !== 'finished')
    ctx.print('still unfinished: the provider gave no final answer; see list for its attempts');
}

export async function resolve(
  ctx: Context,
  command: Extract<Command, { name: 'resolve' }>,
): Promise<void> {
  const { name: _name, tenant, ...rest } = command;
  const input = { ...rest, tenantId: (await resolveTenant(ctx, tenant)).id };
  const { state } = await withDeadline((options) => ctx.ops.resolve.mutate(input, options));
  const reference =
    command.providerReference === undefined ? '' : ` (charge ${command.providerReference})`;
  ctx.print(
    `resolved ${describeTarget(input)} as ${command.outcome}${reference}: now ${clean(state, 20)}`,
  );
}

export async function reconcile(ctx: Context, actor: string): Promise<void> {
  const report = await withDeadline((options) => ctx.ops.reconcile.mutate({ actor }, options));
  ctx.print(`reconciliation run by operator:${actor}`);
  ctx.print(
    reportTable([
      ['examined', report.examined],
      ['charge found (completed)', report.chargeFound],
      ['charge absent (failed)', report.chargeAbsent],
      ['undecided (still unknown)', report.undecided],
      ['failed (needs a person)', report.failed.length],
      ['captures, refunds, cancels asked again', report.operations.examined],
      ['  settled (found, or sent again)', report.operations.settled],
      ['  still unknown (no answer)', report.operations.undecided],
      ['  failed (needs a person)', report.operations.failed.length],
    ]),
  );
  for (const failure of [...report.failed, ...report.operations.failed]) {
    ctx.print(
      `  could not settle ${truncateMiddle(failure.key, KEY_COLUMN_CHARS)} (tenant ${shortId(failure.tenantId)}): ${failure.error}`,
    );
  }
  if (report.undecided > 0) {
    ctx.print(
      "undecided ones wait for the provider's statement to be final past their last attempt; run again later or resolve by hand",
    );
  }
}

export function describeTarget(target: { tenantId: string; operation: string; key: string }) {
  return `${target.operation} ${truncateMiddle(target.key, KEY_COLUMN_CHARS)} (tenant ${shortId(target.tenantId)})`;
}
