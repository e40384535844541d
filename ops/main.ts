/**
 * `npm run ops -- <command>`: the on-call tool for requests that are stuck or whose provider
 * outcome is unknown — list them, re-drive one or all, resolve one by hand, reconcile now.
 * Talks to a running gateway's internal tRPC (GATEWAY_URL, INTERNAL_TOKEN); `--help` for usage.
 */
import { parseCommand, type Command } from './args.ts';
import { describeFailure, formatFailure, gatewayConfig, internalClients } from './client.ts';
import { list, reconcile, redrive, resolve, type Context } from './commands.ts';
import { redriveAll } from './redrive-all.ts';
import { reencrypt } from './reencrypt.ts';
import { apiKeys } from './api-keys.ts';
import { referenceGuard } from './reference-guard.ts';
import { TenantUnknownError } from './tenant-ref.ts';
import { ConfigError, EXIT, USAGE, UsageError } from './usage.ts';

/** Signals closer together than this are one Ctrl-C delivered twice. */
const SIGINT_REPEAT_MS = 1_000;
/** The shell's convention for "ended by SIGINT". */
const EXIT_INTERRUPTED = 130;

async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  let command: Command;
  let ctx: Context;
  try {
    command = parseCommand(argv, env);
    if (command.name === 'help') {
      console.log(USAGE);
      return EXIT.ok;
    }
    const config = gatewayConfig(env);
    ctx = {
      ...internalClients(config),
      config,
      print: (line) => console.log(line),
      now: () => Date.now(),
      interactive: process.stdout.isTTY === true,
    };
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`ops: ${error.message}`);
    console.error(error instanceof ConfigError ? 'see: npm run ops -- --help' : `\n${USAGE}`);
    return EXIT.usage;
  }
  try {
    return await run(ctx, command);
  } catch (error) {
    if (error instanceof TenantUnknownError) {
      console.error(`ops: ${error.message}`);
      return EXIT.usage;
    }
    console.error(
      `ops ${command.name} failed: ${formatFailure(describeFailure(error, ctx.config))}`,
    );
    return EXIT.failed;
  }
}

async function run(ctx: Context, command: Exclude<Command, { name: 'help' }>): Promise<number> {
  switch (command.name) {
    case 'list':
      await list(ctx, command);
      return EXIT.ok;
    case 'redrive':
      await redrive(ctx, command);
      return EXIT.ok;
    case 'resolve':
      await resolve(ctx, command);
      return EXIT.ok;
    case 'reconcile':
      await reconcile(ctx, command.actor);
      return EXIT.ok;
    case 'redrive-all':
      return redriveAllInterruptibly(ctx, command);
    case 'reencrypt':
      return reencrypt(ctx, command);
    case 'api-keys':
      await apiKeys(ctx, command);
      return EXIT.ok;
    case 'reference-guard':
      await referenceGuard(ctx, command);
      return EXIT.ok;
  }
}

/**
 * A person stopping a long sweep still needs to know what it did: the first Ctrl-C ends it after
 * the request in flight and prints the summary; another one a moment later exits at once.
 */
async function redriveAllInterruptibly(
  ctx: Context,
  command: Extract<Command, { name: 'redrive-all' }>,
): Promise<number> {
  const interrupt = new AbortController();
  let interruptedAt = 0;
  const onSigint = (): void => {
    if (!interrupt.signal.aborted) {
      interruptedAt = Date.now();
      interrupt.abort();
      return;
    }
    // One Ctrl-C can arrive twice: the terminal signals the whole process group (npm, tsx, this
    // process) and tsx relays it to us again. Only a deliberate second press exits.
    if (Date.now() - interruptedAt > SIGINT_REPEAT_MS) process.exit(EXIT_INTERRUPTED);
  };
  process.on('SIGINT', onSigint);
  try {
    return await redriveAll(ctx, { ...command, interrupted: interrupt.signal });
  } finally {
    process.off('SIGINT', onSigint);
  }
}

// `ops list | head` closes the pipe early: the reader has what it wanted, so end quietly rather
// than with a stack trace (a mutation already sent has happened either way).
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.ok);
  throw error;
});

process.exitCode = await main(process.argv.slice(2), process.env);
