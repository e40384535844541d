// Standalone sandbox provider for `npm run sandbox-psp`. Reads its settings from the
// environment, prints one line with its URL, and exits cleanly on SIGTERM/SIGINT.
import { loadConfig } from '../app/config.ts';
import { startSandboxPsp } from './sandbox-server.ts';

/** Loopback only: the sandbox approves anything and must never be reachable from outside. */
const BIND_HOST = '127.0.0.1';
/** If close() has not finished by then, something holds a handle; exit rather than linger as
 * an orphan that keeps the port busy for the next run. */
const SHUTDOWN_GRACE_MS = 5_000;

// The gateway's configuration schema holds the sandbox's variables and their defaults too.
const config = loadConfig(process.env);
const psp = await startSandboxPsp({
  host: BIND_HOST,
  port: config.sandboxPspPort,
  blackholeMs: config.sandboxBlackholeMs,
  statementLagMs: config.sandboxStatementLagMs,
  keyRetentionMs:
    config.sandboxKeyRetentionSeconds === undefined
      ? undefined
      : config.sandboxKeyRetentionSeconds * 1_000,
});
console.log(`sandbox-psp listening on ${psp.url}`);

function stop(): void {
  setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS).unref();
  psp.close().then(
    () => {
      process.exitCode = 0;
    },
    (error: unknown) => {
      console.error('sandbox-psp failed to close', error);
      process.exitCode = 1;
    },
  );
}

process.once('SIGTERM', stop);
process.once('SIGINT', stop);
