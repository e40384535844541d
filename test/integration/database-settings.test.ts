import { describe, expect, it } from 'vitest';
import { SELECT_AUTOVACUUM } from '../../lib/db/autovacuum-check.ts';
import { useTestStack } from '../support/test-stack.ts';

const lines: Array<Record<string, unknown>> = [];
const stack = useTestStack('database-settings', {
  app: {
    logLevel: 'warn',
    logDestination: { write: (line: string) => void lines.push(JSON.parse(line) as never) },
  },
});

describe('a gateway starting on a server', () => {
  it('warns exactly when the server runs with autovacuum off', async () => {
    const { rows } = await stack.db.query<{ enabled: boolean }>(SELECT_AUTOVACUUM);
    const warnings = lines.filter(
      (line) => line['level'] === 40 && String(line['msg']).startsWith('autovacuum is off'),
    );
    // This machine's server (and CI's) runs with autovacuum off; the embedded one with it on.
    expect(warnings).toHaveLength(rows[0]?.enabled === true ? 0 : 1);
  });
});
