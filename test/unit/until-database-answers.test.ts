import { describe, expect, it } from 'vitest';
import { untilDatabaseAnswers } from '../../app/until-database-answers.ts';

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
    await expect(untilDatabaseAnswers(() => Promise.reject(reset()), 600)).rejects.toThrow(
      'read ECONNRESET',
    );
  });
});
