// The sandbox payment provider: a real HTTP server that behaves like a card processor,
// including its failure modes, for the gateway's tests and local runs. All state lives in
// the instance, so tests can run several providers side by side without sharing books.
import { setMaxListeners } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAttemptLog } from './attempt-log.ts';
import type { AttemptFilter } from './attempt-log.ts';
import { createBooksClock } from './books-clock.ts';
import { createChargeOperations } from './charge-operations.ts';
import { createChargeProcessor } from './charge-processor.ts';
import { createChargeRoutes } from './charge-routes.ts';
import { createChargeStore } from './charge-store.ts';
import type { Charge } from './charge-types.ts';
import { createFaultState } from './fault-state.ts';
import { errorAnswer, sendJson } from './http-json.ts';
import { createIdempotencyLedger } from './idempotency-ledger.ts';
import { createOperationLog } from './operation-log.ts';
import type { OperationFilter } from './operation-log.ts';
import { createOperationRoutes } from './operation-routes.ts';
import type { OperationAttempt, Refund } from './operation-types.ts';
import { createRefundStore } from './refund-store.ts';
import { createRequestRouter } from './request-router.ts';
import { createSettlementStore } from './settlement-store.ts';
import { createStatementRoute } from './statement-route.ts';

export type { Charge, ChargeStatus } from './charge-types.ts';
export type { OperationAttempt, OperationKind, Refund } from './operation-types.ts';

export const DEFAULT_HOST = '127.0.0.1';
/** How long pm_card_unknown keeps its key unreachable: longer than any sane client timeout,
 * so a gateway cannot simply wait the outage out inside one request. */
export const DEFAULT_BLACKHOLE_MS = 30_000;
/** pm_card_slow's processing time: slow enough to overlap a retry or duplicate, yet within a
 * typical client timeout so the first caller still gets its answer. */
export const DEFAULT_SLOW_MS = 3_000;
/** How far behind "now" a statement declares the books final: like a real provider's
 * settlement cut-off, it makes reconciliation cope with a complete-until that trails the
 * present instead of assuming every statement is final up to the second it was asked for. */
export const DEFAULT_STATEMENT_LAG_MS = 1_000;

export interface SandboxPspOptions {
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
  /** Port to bind; default 0 = an ephemeral port chosen by the OS. */
  port?: number;
  /** How long pm_card_unknown hides its key and reference, from the first attempt. */
  blackholeMs?: number;
  /** How long pm_card_slow takes before it applies and answers. */
  slowMs?: number;
  /** GET /v1/statement answers completeUntil = now - statementLagMs: every charge created
   * before that instant is already in the books and no later-recorded one can join them. */
  statementLagMs?: number;
  /** How long an Idempotency-Key is remembered (SANDBOX_KEY_RETENTION_SECONDS); unset: for
   * ever. Past it a request under the key acts again, as at a real provider; the probes still
   * find what the key made. */
  keyRetentionMs?: number;
}

export interface SandboxPsp {
  /** Base URL without trailing slash, e.g. http://127.0.0.1:54321. */
  url: string;
  /** Stops listening and destroys every socket, including deliberately hanging requests. */
  close(): Promise<void>;
  /** Copies of the recorded charges, oldest first. */
  charges(filter?: { reference?: string }): Charge[];
  /** POST /v1/charges requests received, including rejections, 503s, replays and hangs. */
  attempts(filter?: AttemptFilter): number;
  /** Copies of the recorded refunds, oldest first. */
  refunds(filter?: { chargeId?: string }): Refund[];
  /** Capture/void/refund requests that reached the provider's decision, oldest first: applied
   * ones, refusals, replays, mismatches and 503s (not those turned away for a missing key or a
   * malformed body). Counting `applied` ones counts effects. */
  operations(filter?: OperationFilter): OperationAttempt[];
}

function nonNegativeMs(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`${name} must be >= 0 ms`);
  return value;
}

export async function startSandboxPsp(options: SandboxPspOptions = {}): Promise<SandboxPsp> {
  const host = options.host ?? DEFAULT_HOST;
  const shutdown = new AbortController();
  // Every in-progress sleep (slow cards, blackholes) listens on this signal; under load there
  // are legitimately hundreds, and the default cap of 10 would spam leak warnings.
  setMaxListeners(0, shutdown.signal);
  const statementLagMs = nonNegativeMs(
    'statementLagMs',
    options.statementLagMs ?? DEFAULT_STATEMENT_LAG_MS,
  );
  const clock = createBooksClock();
  const store = createChargeStore({ clock });
  const attempts = createAttemptLog();
  const faults = createFaultState();
  // One ledger for charge creation and the operations: they share one key space.
  const ledger = createIdempotencyLedger({
    retentionMs:
      options.keyRetentionMs === undefined
        ? undefined
        : nonNegativeMs('keyRetentionMs', options.keyRetentionMs),
  });
  const refunds = createRefundStore({ clock });
  const settlements = createSettlementStore({ clock });
  const operationLog = createOperationLog();
  const processor = createChargeProcessor({
    store,
    ledger,
    faults,
    slowMs: nonNegativeMs('slowMs', options.slowMs ?? DEFAULT_SLOW_MS),
    blackholeMs: nonNegativeMs('blackholeMs', options.blackholeMs ?? DEFAULT_BLACKHOLE_MS),
    shutdown: shutdown.signal,
  });
  const route = createRequestRouter({
    charges: createChargeRoutes({ store, attempts, faults, processor, shutdown: shutdown.signal }),
    operations: createOperationRoutes({
      store,
      refunds,
      settlements,
      operations: createChargeOperations({
        store,
        refunds,
        settlements,
        ledger,
        faults,
        log: operationLog,
      }),
    }),
    statement: createStatementRoute({ store, clock, statementLagMs }),
  });

  const server = createServer((request, response) => {
    route(request, response).catch((error: unknown) => {
      // A sandbox bug must surface as a loud 500, not as a hang the gateway would read as a
      // provider timeout and "handle" correctly, hiding the bug.
      const message = error instanceof Error ? error.message : String(error);
      sendJson(response, errorAnswer({ status: 500, code: 'SANDBOX_INTERNAL_ERROR', message }));
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve, reject) => {
      shutdown.abort();
      server.close((error) => (error === undefined ? resolve() : reject(error)));
      // server.close() only waits for busy sockets; hanging requests never finish on their own.
      server.closeAllConnections();
    });
    return closing;
  };

  return {
    url: `http://${urlHost}:${port}`,
    close,
    charges: (filter) => store.list(filter),
    attempts: (filter) => attempts.count(filter),
    refunds: (filter) => refunds.list(filter),
    operations: (filter) => operationLog.list(filter),
  };
}
