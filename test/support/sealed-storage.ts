import pg from 'pg';

/** Exactly what the merchant receives: the response body's bytes, for byte-equality checks. */
export async function rawGraphql(
  url: string,
  request: { apiKey: string; query: string; variables: Record<string, unknown> },
): Promise<{ status: number; text: string }> {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${request.apiKey}` },
    body: JSON.stringify({ query: request.query, variables: request.variables }),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: response.status, text: await response.text() };
}

/**
 * The first answer's bytes as its replays carry them: only the replay markers differ
 * (`idempotency.replayed`, and `extensions.idempotency` at the end of the document).
 */
export function asReplay(first: string): string {
  const match = /^(.*\}\}\})\}(\s*)$/s.exec(first);
  if (match === null) throw new Error(`not a single-field answer: ${first}`);
  const marked = match[1]!.replace('"replayed":false', '"replayed":true');
  return `${marked},"extensions":{"idempotency":{"replayed":true}}}${match[2]!}`;
}

/** The first error of class `type` among `errors` or their causes (services' errors arrive wrapped). */
export function findCause<T>(
  errors: unknown[],
  type: abstract new (...args: never[]) => T,
): T | undefined {
  for (const error of errors) {
    for (
      let e: unknown = error;
      e !== undefined && e !== null;
      e = (e as { cause?: unknown }).cause
    ) {
      if (e instanceof type) return e;
    }
  }
  return undefined;
}

/**
 * Every row of every table in the database as text (`SELECT t::text`), by table: what a leaked
 * backup or a curious reader with SELECT would see.
 */
export async function dumpTables(db: pg.Pool): Promise<Map<string, string>> {
  const { rows: tables } = await db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') ORDER BY 1`,
  );
  const dump = new Map<string, string>();
  for (const { name } of tables) {
    const { rows } = await db.query<{ row: string }>(
      `SELECT t::text AS row FROM ${pg.escapeIdentifier(name)} t`,
    );
    dump.set(name, rows.map((r) => r.row).join('\n'));
  }
  return dump;
}

/**
 * The tables whose dump contains `needle`, as text or as the hex that a `bytea` column (a sealed
 * answer, say) is dumped as.
 */
export function tablesHolding(dump: Map<string, string>, needle: string): string[] {
  const hex = Buffer.from(needle, 'utf8').toString('hex');
  return [...dump]
    .filter(([, text]) => text.includes(needle) || text.includes(hex))
    .map(([name]) => name);
}

/**
 * Every sealed value in the database (answers and signing secrets), with what it is bound to. An
 * answer's body is as stored: a Buffer (a binary envelope), or for a row written before 0026 a
 * JSON string (a text envelope) or the answer in clear.
 */
export async function sealedValues(db: pg.Pool): Promise<{
  answers: Array<{ tenantId: string; operation: string; key: string; body: unknown }>;
  secrets: Array<{ tenantId: string; endpointId: string; secret: string }>;
}> {
  const answers = await db.query<{
    tenant_id: string;
    operation: string;
    key: string;
    sealed: Buffer | null;
    body: unknown;
  }>(
    `SELECT k.tenant_id, k.operation, k.key, r.sealed, r.body
       FROM idempotency_responses r
       JOIN idempotency_keys k ON k.id = r.request_id AND k.expires_at = r.expires_at
      WHERE r.stored_as = 'inline' ORDER BY r.request_id`,
  );
  const secrets = await db.query<{ tenant_id: string; id: string; secret: string }>(
    'SELECT tenant_id, id, secret FROM webhook_endpoints ORDER BY tenant_id, id',
  );
  return {
    answers: answers.rows.map((r) => ({
      tenantId: r.tenant_id,
      operation: r.operation,
      key: r.key,
      body: r.sealed ?? r.body,
    })),
    secrets: secrets.rows.map((r) => ({
      tenantId: r.tenant_id,
      endpointId: r.id,
      secret: r.secret,
    })),
  };
}
