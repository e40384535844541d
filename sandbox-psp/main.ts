// Standalone sandbox provider for `npm run sandbox-psp`. Reads its settings from the
// environment, prints one line with its URL, and exits cleanly on SIGTERM/SIGINT.
import {
  DEFAULT_BLACKHOLE_MS,
  DEFAULT_STATEMENT_LAG_MS,
  startSandboxPsp,
} from './sandbox-server.ts';

/** Port the gateway's local configuration expects the sandbox on. */
const DEFAULT_PORT = 4010;
/** Loopback only: the sandbox approves anything and must never be reachable from outside. */
const BIND_HOST = '127.0.0.1';
/** If close() has not finished by then, something holds a handle; exit rather than linger as
 * an orphan that keeps the port busy for the next run. */
const SHUTDOWN_GRACE_MS = 5_000;

function readNonNegativeInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  }
  return value;
}

const psp = await startSandboxPsp({
  host: BIND_HOST,
  port: readNonNegativeInt('SANDBOX_PSP_PORT', DEFAULT_PORT),
  blackholeMs: readNonNegativeInt('SANDBOX_BLACKHOLE_MS', DEFAULT_BLACKHOLE_MS),
  statementLagMs: readNonNegativeInt('SANDBOX_STATEMENT_LAG_MS', DEFAULT_STATEMENT_LAG_MS),
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
