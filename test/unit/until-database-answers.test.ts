import { describe, expect, it } from 'vitest';
import { untilDatabaseAnswers } from '../../app/until-database-answers.ts';
import { isMigrationInterrupted } from '../../migrations/migrate.ts';

/** An error as a reset connection gives it. */
function reset(): Error {
  return Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
}

describe('a start-up step against the database', () => {
  it('runs again while the connection is lost, and answers once it is back', async () => {
    let calls = 0;
    const value = await untilDatabaseAnswers(() => {
      calls += 1;
      return calls < 3 ? Promise.reject(reset()) : Promise.resolve('migrated');
    });
    expect(value).toBe('migrated');
    expect(calls).toBe(3);
  });

  it('fails at once on anything but a lost connection', async () => {
    let calls = 0;
    const syntax = Object.assign(new Error('syntax error'), { code: '42601' });
    await expect(
      untilDatabaseAnswers(() => {
        calls += 1;
        return Promise.reject(syntax);
      }),
    ).rejects.toBe(syntax);
    expect(calls).toBe(1);
  });

  it('gives up with the last error once its wait is over', async () => {
    await expect(
      untilDatabaseAnswers(() => Promise.reject(reset()), { waitMs: 600 }),
    ).rejects.toThrow('read ECONNRESET');
  });

  it('runs again when the ORM’s statement lost its connection (knex names the statement first)', async () => {
    // What a gateway's start met when its connection was cut during MikroORM's database check.
    const cut = new Error(
      "select 1 from pg_database where datname = 'payments' - Connection terminated unexpectedly",
    );
    let calls = 0;
    const value = await untilDatabaseAnswers(() => {
      calls += 1;
      return calls < 2 ? Promise.reject(cut) : Promise.resolve('migrated');
    });
    expect(value).toBe('migrated');
    expect(calls).toBe(2);
    const refused = new Error("select 1 from pg_database where datname = 'payments' - boom");
    await expect(untilDatabaseAnswers(() => Promise.reject(refused))).rejects.toBe(refused);
  });

  it('runs migrations again when a lost connection ended their transaction under them', async () => {
    // knex's report of the migrator's next statement once the connection failed mid-run.
    const ended = new Error(
      'Transaction query already complete, run with DEBUG=knex:tx for more info',
    );
    let calls = 0;
    const value = await untilDatabaseAnswers(
      () => {
        calls += 1;
        return calls < 2 ? Promise.reject(ended) : Promise.resolve('migrated');
      },
      { alsoLost: isMigrationInterrupted },
    );
    expect(value).toBe('migrated');
    expect(calls).toBe(2);
    await expect(untilDatabaseAnswers(() => Promise.reject(ended))).rejects.toBe(ended);
  });
});
