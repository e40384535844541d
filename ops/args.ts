import { userInfo } from 'node:os';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './usage.ts';

export type UnfinishedState = 'started' | 'unknown';

export interface Target {
  /** A tenant's name or id, as given: resolved by the command (tenant-ref.ts). */
  tenant: string;
  operation: string;
  key: string;
  actor: string;
  reason: string;
}

export type Command =
  | { name: 'help' }
  | { name: 'list'; states: UnfinishedState[]; limit: number }
  | ({ name: 'redrive' } & Target)
  | ({
      name: 'resolve';
      outcome: 'charged' | 'not_charged';
      providerReference: string | undefined;
    } & Target)
  | { name: 'reconcile'; actor: string }
  | { name: 'redrive-all'; state: UnfinishedState; reason: string; limit: number; actor: string }
  | { name: 'reencrypt'; batch: number }
  | ApiKeysCommand
  | ReferenceGuardCommand;

export type ReferenceGuardCommand =
  | { name: 'reference-guard'; action: 'show'; tenant: string }
  | { name: 'reference-guard'; action: 'on' | 'off'; tenant: string; actor: string };

export type ApiKeysCommand =
  | { name: 'api-keys'; action: 'create'; tenant: string; expiresAt: string | null }
  | { name: 'api-keys'; action: 'list'; tenant: string }
  | { name: 'api-keys'; action: 'revoke'; tenant: string; id: string };

type Options = NonNullable<ParseArgsConfig['options']>;

const HELP: Options = { help: { type: 'boolean', short: 'h' } };
const ACTOR: Options = { actor: { type: 'string' } };
const TARGET: Options = {
  ...ACTOR,
  tenant: { type: 'string' },
  operation: { type: 'string' },
  key: { type: 'string' },
  reason: { type: 'string' },
};
const OPTIONS_BY_COMMAND = {
  list: { state: { type: 'string' }, limit: { type: 'string' } },
  redrive: TARGET,
  resolve: { ...TARGET, outcome: { type: 'string' }, 'provider-reference': { type: 'string' } },
  reconcile: ACTOR,
  'redrive-all': {
    ...ACTOR,
    state: { type: 'string' },
    reason: { type: 'string' },
    limit: { type: 'string' },
  },
  reencrypt: { batch: { type: 'string' } },
  'api-keys': {
    tenant: { type: 'string' },
    'expires-at': { type: 'string' },
    id: { type: 'string' },
  },
  'reference-guard': { ...ACTOR, tenant: { type: 'string' } },
} satisfies Record<string, Options>;
type CommandName = keyof typeof OPTIONS_BY_COMMAND;

/** The server caps a listing at 1 000 rows. */
const MAX_LIMIT = 1_000;
const DEFAULT_LIST_LIMIT = 50;
const DEFAULT_SWEEP_LIMIT = 100;
/** Rows per re-seal call: the server's cap; each batch is one read and one write. */
const MAX_RESEAL_BATCH = 1_000;
/** Small enough that a batch never holds the gateway's pool long, big enough to finish soon. */
const DEFAULT_RESEAL_BATCH = 200;

type Values = Record<string, string | boolean | undefined>;

/**
 * Reads argv (without node and the script) for one command. Everything the server would
 * reject anyway is checked here too, so a sweep never starts with a reason it will refuse
 * for every request.
 */
export function parseCommand(argv: readonly string[], env: NodeJS.ProcessEnv): Command {
  const [first, ...rest] = argv;
  if (first === undefined) throw new UsageError('no command given');
  if (first === '--help' || first === '-h' || first === 'help') return { name: 'help' };
  if (!isCommandName(first)) throw new UsageError(`unknown command: ${first}`);
  if (first === 'api-keys') return apiKeysCommand(rest);
  if (first === 'reference-guard') return referenceGuardCommand(rest, env);
  const values = parseOptions(first, rest);
  if (values['help'] === true) return { name: 'help' };
  switch (first) {
    case 'list':
      return {
        name: 'list',
        states: statesOf(optional(values, 'state') ?? 'all'),
        limit: limitOf(optional(values, 'limit'), DEFAULT_LIST_LIMIT),
      };
    case 'redrive':
      return { name: 'redrive', ...targetOf(values, env) };
    case 'resolve':
      return {
        name: 'resolve',
        ...targetOf(values, env),
        outcome: outcomeOf(required(values, 'outcome')),
        providerReference: optional(values, 'provider-reference'),
      };
    case 'reconcile':
      return { name: 'reconcile', actor: actorOf(values, env) };
    case 'redrive-all': {
      const state = optional(values, 'state') ?? 'started';
      if (state !== 'started' && state !== 'unknown')
        throw new UsageError(`--state must be started or unknown, not ${state}`);
      return {
        name: 'redrive-all',
        state,
        reason: reasonOf(values),
        limit: limitOf(optional(values, 'limit'), DEFAULT_SWEEP_LIMIT),
        actor: actorOf(values, env),
      };
    }
    case 'reencrypt': {
      const raw = optional(values, 'batch');
      const batch = raw === undefined ? DEFAULT_RESEAL_BATCH : Number(raw);
      if (!Number.isInteger(batch) || batch < 1 || batch > MAX_RESEAL_BATCH)
        throw new UsageError(
          `--batch must be a whole number from 1 to ${MAX_RESEAL_BATCH}, not ${raw}`,
        );
      return { name: 'reencrypt', batch };
    }
  }
}

/** `api-keys create|list|revoke --tenant NAME …`: the action is the first argument. */
function apiKeysCommand(args: readonly string[]): Command {
  const [action, ...rest] = args;
  if (action === '--help' || action === '-h') return { name: 'help' };
  const values = parseOptions('api-keys', rest);
  if (values['help'] === true) return { name: 'help' };
  const tenant = required(values, 'tenant');
  switch (action) {
    case 'create': {
      const raw = optional(values, 'expires-at');
      if (raw !== undefined && Number.isNaN(Date.parse(raw)))
        throw new UsageError(`--expires-at must be an ISO 8601 date and time, not ${raw}`);
      return {
        name: 'api-keys',
        action,
        tenant,
        expiresAt: raw === undefined ? null : new Date(raw).toISOString(),
      };
    }
    case 'list':
      return { name: 'api-keys', action, tenant };
    case 'revoke':
      return { name: 'api-keys', action, tenant, id: required(values, 'id') };
    case undefined:
    default:
      throw new UsageError(
        `api-keys: the action must be create, list or revoke, not ${action ?? 'none'}`,
      );
  }
}

/** `reference-guard show|on|off --tenant NAME`: the action is the first argument. */
function referenceGuardCommand(args: readonly string[], env: NodeJS.ProcessEnv): Command {
  const [action, ...rest] = args;
  if (action === '--help' || action === '-h') return { name: 'help' };
  const values = parseOptions('reference-guard', rest);
  if (values['help'] === true) return { name: 'help' };
  const tenant = required(values, 'tenant');
  switch (action) {
    case 'show':
      return { name: 'reference-guard', action, tenant };
    case 'on':
    case 'off':
      return { name: 'reference-guard', action, tenant, actor: actorOf(values, env) };
    case undefined:
    default:
      throw new UsageError(
        `reference-guard: the action must be show, on or off, not ${action ?? 'none'}`,
      );
  }
}

function isCommandName(name: string): name is CommandName {
  return Object.hasOwn(OPTIONS_BY_COMMAND, name);
}

function parseOptions(command: CommandName, args: string[]): Values {
  try {
    const { values, positionals } = parseArgs({
      args,
      options: { ...HELP, ...OPTIONS_BY_COMMAND[command] },
      strict: true,
      allowPositionals: true,
    });
    if (positionals.length > 0)
      throw new UsageError(`${command}: unexpected argument ${positionals.join(' ')}`);
    return values as Values;
  } catch (error) {
    // parseArgs names the offending option in its message (unknown option, missing value).
    if (error instanceof TypeError) throw new UsageError(`${command}: ${error.message}`);
    throw error;
  }
}

function optional(values: Values, name: string): string | undefined {
  const value = values[name];
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  if (trimmed === '') throw new UsageError(`--${name} is empty`);
  return trimmed;
}

function required(values: Values, name: string): string {
  const value = optional(values, name);
  if (value === undefined) throw new UsageError(`--${name} is required`);
  return value;
}

function statesOf(state: string): UnfinishedState[] {
  if (state === 'all') return ['started', 'unknown'];
  if (state === 'started' || state === 'unknown') return [state];
  throw new UsageError(`--state must be started, unknown or all, not ${state}`);
}

function limitOf(raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const limit = Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    throw new UsageError(`--limit must be a whole number from 1 to ${MAX_LIMIT}, not ${raw}`);
  return limit;
}

function outcomeOf(raw: string): 'charged' | 'not_charged' {
  if (raw === 'charged' || raw === 'not_charged') return raw;
  throw new UsageError(`--outcome must be charged or not_charged, not ${raw}`);
}

function reasonOf(values: Values): string {
  const reason = required(values, 'reason');
  if (reason.length < 3) throw new UsageError('--reason must say why, in 3 characters or more');
  return reason;
}

function targetOf(values: Values, env: NodeJS.ProcessEnv): Target {
  return {
    tenant: required(values, 'tenant'),
    operation: required(values, 'operation'),
    key: required(values, 'key'),
    reason: reasonOf(values),
    actor: actorOf(values, env),
  };
}

/**
 * The actor is recorded as operator:<actor> with every intervention; under sudo, in a container
 * or in CI, $USER may be unset, and then the account name is the best honest default.
 */
function actorOf(values: Values, env: NodeJS.ProcessEnv): string {
  const fromEnv = env['USER']?.trim();
  const actor = optional(values, 'actor') ?? (fromEnv ? fromEnv : accountName());
  if (actor === undefined || actor === '')
    throw new UsageError('no actor: pass --actor NAME (the person acting)');
  if (actor.length > 100) throw new UsageError('--actor is longer than 100 characters');
  return actor;
}

function accountName(): string | undefined {
  try {
    return userInfo().username;
  } catch {
    return undefined;
  }
}
