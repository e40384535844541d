import { describe, expect, it } from 'vitest';
import { startGatewayProcess } from '../support/gateway-process.ts';
import { useTestDatabase } from '../support/test-database.ts';

/**
 * `npm start` on a real database (DATABASE_URL, NODE_ENV=production) without usable data keys:
 * the start fails before touching the database, with one line that names the variable.
 */
const database = useTestDatabase('data-keys-start');

async function startFailure(env: Record<string, string>): Promise<string> {
  try {
    const gateway = await startGatewayProcess({ databaseUrl: database.url, pspUrl: null, env });
    await gateway.kill('SIGKILL');
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  throw new Error('the gateway started');
}

function startFailedLines(output: string): string[] {
  return output.split('\n').filter((line) => line.includes('start failed'));
}

describe('a gateway on DATABASE_URL', () => {
  it('without DATA_ENCRYPTION_KEYS refuses to start, in one line', async () => {
    const output = await startFailure({ DATA_ENCRYPTION_KEYS: '' });
    expect(startFailedLines(output)).toEqual([
      expect.stringMatching(/^start failed: DATA_ENCRYPTION_KEYS is not set: with DATABASE_URL/),
    ]);
    expect(output).not.toMatch(/^\s+at /m); // no stack trace
  });

  it('with a malformed DATA_ENCRYPTION_KEYS refuses to start, in one line, echoing no key', async () => {
    const output = await startFailure({ DATA_ENCRYPTION_KEYS: 'k1:c2hvcnQta2V5' });
    expect(startFailedLines(output)).toEqual([
      'start failed: DATA_ENCRYPTION_KEYS: key "k1" must be 32 bytes in base64 (openssl rand -base64 32)',
    ]);
    expect(output).not.toContain('c2hvcnQta2V5');
    expect(output).not.toMatch(/^\s+at /m);
  });
});
