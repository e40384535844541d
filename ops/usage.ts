/** Exit codes: scripts and runbooks branch on them. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** A mistake in how the tool was called: printed with the usage, exit 2, nothing sent. */
export class UsageError extends Error {
  override readonly name: string = 'UsageError';
}

/** The environment is missing or wrong (token, URL): exit 2 too, but the usage would bury it. */
export class ConfigError extends UsageError {
  override readonly name = 'ConfigError';
}

export const USAGE = `Usage: npm run ops -- <command> [options]

On-call tool for requests that are stuck (started) or whose provider outcome is unknown.

Commands:
  list [--state started|unknown|all] [--limit N]
      Unfinished requests, oldest first, each with its phase history and interventions.
      Defaults: --state all, --limit 50.
  redrive --tenant T --operation O --key K --reason "..." [--actor NAME]
      Resume one request now, as the recovery worker would. Refused (CONFLICT) when it is
      finished or its owner still holds a live lease.
  resolve --tenant T --operation O --key K --outcome charged|not_charged
          [--provider-reference REF] --reason "..." [--actor NAME]
      Settle an UNKNOWN request by hand after checking the provider's dashboard. A charged
      outcome needs --provider-reference (the provider's charge id).
  reconcile [--actor NAME]
      Settle unknown payments against the provider's statement now, and ask the provider
      again about unknown captures, refunds and cancels.
  redrive-all [--state started|unknown] --reason "..." [--limit N] [--actor NAME]
      Re-drive every matching request one by one (default --state started, --limit 100),
      continuing past conflicts, then print a summary.
  reencrypt [--batch N]
      Re-seal every stored answer and webhook signing secret under the gateway's first data
      key (DATA_ENCRYPTION_KEYS), N rows per call (default 200), with a progress bar. Safe
      while the gateway serves and safe to re-run; ends with the data keys still in use.
  api-keys create --tenant T [--expires-at ISO-8601]
      Issue another API key for a tenant; the key is printed once and never again.
  api-keys list --tenant T
      A tenant's keys: prefix, origin, created, last used, expiry, revoked.
  api-keys revoke --tenant T --id KEY-ID
      Revoke a key; running gateways refuse it within their authentication cache lifetime
      (5 seconds). The tenant's other keys go on working.
  reference-guard show|on|off --tenant T [--actor NAME]
      A tenant's reference guard: when on, a second live payment (not FAILED or CANCELED)
      with the same reference is refused (DUPLICATE_REFERENCE) under any key. Off by default.
      Turning it on fails (CONFLICT) while two live payments already share a reference.

Options:
  --tenant T     a tenant by name or id, in every command; an unknown one exits 2
  --actor NAME   who acts, recorded with the intervention (default: $USER)
  -h, --help     this text

Environment:
  GATEWAY_URL     gateway base URL (default http://127.0.0.1:4000); tRPC is served at /trpc
                  (with INTERNAL_PORT set on the gateway: its internal address, INTERNAL_HOST:INTERNAL_PORT)
  INTERNAL_TOKEN  the gateway's internal token (required; an embedded gateway keeps it in
                  .data/internal-token)

Exit codes: 0 done, 1 the gateway refused or failed (code and message printed), 2 bad usage
or no such tenant.`;
