// GET /v1/statement: the provider's settlement statement, i.e. its books for a period. It lists
// every charge the provider recorded, pm_card_unknown's included while their blackhole hides
// them from calls and probes: a statement is what reconciliation settles unknown outcomes on,
// so it must show what happened, not what the API is currently willing to say.
import type { ServerResponse } from 'node:http';
import type { BooksClock } from './books-clock.ts';
import type { ChargeStore } from './charge-store.ts';
import { invalidRequest, sendJson } from './http-json.ts';
import { parseStatementRange } from './statement-range-parser.ts';

export interface StatementRouteDeps {
  store: ChargeStore;
  clock: BooksClock;
  /** How far behind "now" the books are final; see SandboxPspOptions.statementLagMs. */
  statementLagMs: number;
}

export type StatementRoute = (url: URL, response: ServerResponse) => void;

export function createStatementRoute(deps: StatementRouteDeps): StatementRoute {
  const { store, clock, statementLagMs } = deps;
  return (url, response) => {
    const range = parseStatementRange(url.searchParams);
    if (!range.ok) {
      sendJson(response, invalidRequest(range.message));
      return;
    }
    // Read the clock before the books: every charge recorded from here on is stamped at or
    // after this instant, hence at or after completeUntil, so it cannot belong to the period
    // this answer calls complete.
    const completeUntil = new Date(clock.nowMs() - statementLagMs).toISOString();
    const data = store.createdBetween(range.value);
    sendJson(response, { status: 200, body: { data, completeUntil } });
  };
}
