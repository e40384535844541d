import { ConfigInvalidError } from '../lib/errors.ts';
import {
  EMPTY_WEBHOOK_ALLOW_LIST,
  LOOPBACK_WEBHOOK_ALLOWED_HOSTS,
  parseWebhookAllowList,
  type WebhookAllowList,
} from '../services/notifications/index.ts';
import { configSchema, configVariables, type ConfigVariables } from './config-schema.ts';
import { topologyOf, topologyProblem } from './topology.ts';

/** The configuration: the variables, and what is decided from several of them, once. */
export type Config = ConfigVariables & {
  /**
   * No DATABASE_URL: the process runs its own embedded PostgreSQL under .data/ (main.ts's
   * openDatabase), as on a developer's machine after `npm install && npm start`.
   */
  embedded: boolean;
  /**
   * Where webhooks may go beyond public hosts. WEBHOOK_ALLOWED_HOSTS when set, whatever the mode;
   * unset, loopback in embedded mode (a developer's own receiver, ADR 0043), else nothing.
   * Registration and every delivery judge by this one list.
   */
  webhookAllowList: WebhookAllowList;
  /** The list is embedded mode's loopback default, not the variable: the start banner says so. */
  webhookLoopbackByDefault: boolean;
};

/**
 * The configuration, from the environment (docs/api.md §1), validated once against the schema in
 * config-schema.ts. A bad value fails the start with one line naming its variable: a typo in a
 * number must stop the start, not run the gateway with NaN leases.
 */
export function loadConfig(env: NodeJS.ProcessEnv): Config {
  const variables = configVariables();
  // An empty variable is an unset one, as in shells that export VAR= to clear it.
  const input = Object.fromEntries(
    variables.map(({ key, env: name }) => [key, env[name] === '' ? undefined : env[name]]),
  );
  const parsed = configSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = String(issue?.path[0] ?? '');
    const name = variables.find((v) => v.key === key)?.env ?? key;
    const message = issue?.message ?? 'is not valid';
    throw new ConfigInvalidError(message.startsWith(name) ? message : `${name} ${message}`);
  }
  return checkCombinations(derived(parsed.data));
}

function derived(variables: ConfigVariables): Config {
  const embedded = variables.databaseUrl === undefined;
  const webhookLoopbackByDefault = embedded && variables.webhookAllowedHosts === undefined;
  return {
    ...variables,
    embedded,
    webhookAllowList:
      variables.webhookAllowedHosts ??
      (webhookLoopbackByDefault
        ? parseWebhookAllowList(LOOPBACK_WEBHOOK_ALLOWED_HOSTS)
        : EMPTY_WEBHOOK_ALLOW_LIST),
    webhookLoopbackByDefault,
  };
}

/**
 * Rules across variables. Each refusal would otherwise leave the operator believing in a limit,
 * a separation or a safety that is not there.
 */
function checkCombinations(config: Config): Config {
  if (config.faultPoints !== undefined && config.nodeEnv !== 'test') {
    // Fault points kill the process at a named point: a variable left in a deployment's
    // environment must not be able to crash production.
    throw new ConfigInvalidError('FAULT_POINTS is accepted only with NODE_ENV=test');
  }
  if (config.rateLimitTenantBurst !== undefined && config.rateLimitTenantPerSecond === undefined)
    throw new ConfigInvalidError(
      'RATE_LIMIT_TENANT_BURST is set but RATE_LIMIT_TENANT_PER_SECOND is not',
    );
  if (
    config.internalPort !== undefined &&
    config.internalPort !== 0 &&
    config.internalPort === config.port
  )
    throw new ConfigInvalidError(`INTERNAL_PORT must differ from PORT, both are ${config.port}`);
  const topology = topologyProblem(topologyOf(config), {
    internalPort: config.internalPort,
    internalTokenSet: config.internalToken !== undefined,
    pspUrlSet: config.pspUrl !== undefined,
  });
  if (topology !== null) throw new ConfigInvalidError(topology);
  return config;
}

/** Every default, as the schema gives it: what a process started with an empty environment runs. */
export function defaultConfig(): Config {
  return loadConfig({});
}
