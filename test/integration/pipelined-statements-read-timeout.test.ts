import type pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { PipelinedStatements } from '../../lib/db/pipelined-statements.ts';
import { preparingClientClass } from '../../lib/db/prepared-client.ts';
import { useTestDatabase } from '../support/test-database.ts';

/**
 * pg's client-side query_timeout (the request pool sets one, pool.ts) arms a timer for every
 * query, which the query clears when it settles. A round trip of pipelined statements must do
 * the same. Otherwise every round trip leaves a timer behind for the whole timeout, and the
 * timer holds the round trip and its rows until it fires.
 */
const database = useTestDatabase('pipelined-read-timeout');
const clients: pg.Client[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) await client.end().catch(() => undefined);
});

async function clientWithReadTimeout(queryTimeoutMs: number): Promise<pg.Client> {
  const Client = preparingClientClass();
  const client = new Client({ connectionString: database.url, query_timeout: queryTimeoutMs });
  clients.push(client);
  await client.connect();
  return client;
}

function roundTrip(client: pg.Client, statements: Array<{ text: string; values: unknown[] }>) {
  const pipelined = new PipelinedStatements(statements, (text) =>
    (client as unknown as { statementName: (t: string) => string }).statementName(text),
  );
  void client.query(pipelined as unknown as pg.Submittable);
  return Promise.all(pipelined.results);
}

const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('a round trip of pipelined statements on a client with a read timeout', () => {
  it('leaves no timer behind once answered', async () => {
    const client = await clientWithReadTimeout(60_000);
    await roundTrip(client, [{ text: 'SELECT $1::int AS n', values: [0] }]);
    const before = timers();
    for (let i = 1; i <= 20; i++) {
      const [answer] = await roundTrip(client, [
        { text: 'SELECT $1::int AS n', values: [i] },
        { text: 'SELECT $1::text AS t', values: [`round ${i}`] },
      ]);
      expect(answer!.rows).toEqual([{ n: i }]);
    }
    expect(timers() - before).toBe(0);
  });

  it('still fails at the read timeout when no answer comes', async () => {
    const client = await clientWithReadTimeout(300);
    const answer = roundTrip(client, [{ text: 'SELECT pg_sleep($1::float8)', values: [1] }]);
    await expect(answer).rejects.toThrow('Query read timeout');
  });
});
