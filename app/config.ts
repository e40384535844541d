import { ConfigInvalidError } from '../lib/errors.ts';
import { configSchema, configVariables, type Config } from './config-schema.ts';
import { topologyOf, topologyProblem } from './topology.ts';

export type { Config } from './config-schema.ts';

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
  return checkCombinations(parsed.data);
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
