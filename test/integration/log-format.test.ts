import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.ts';
import { graphql } from '../support/graphql-client.ts';
import { useTestDatabase } from '../support/test-database.ts';
import { TENANT_A } from '../support/test-stack.ts';

/**
 * What a person and a collector each get from a real gateway process: readable lines with
 * LOG_FORMAT=pretty (what a terminal gets by default), JSON lines on a pipe. A pseudo-terminal
 * is out of a test's reach; the choice made from isTTY is test/unit/log-format.test.ts's.
 */
const database = useTestDatabase('log_format');
const BALANCES = 'query { balances { currency available } }';
/** Lines written just before a SIGKILL: enough that any buffering would show. */
const KILLED_AFTER_LINES = 200;
let gateway: GatewayProcess | undefined;
afterEach(async () => {
  await gateway?.kill('SIGKILL');
  gateway = undefined;
});

/** The gateway's output once its line for one request is in it. */
async function outputAfterOneRequest(env: Record<string, string>): Promise<string[]> {
  gateway = await startGatewayProcess({ databaseUrl: database.url, pspUrl: null, env });
  const answer = await graphql(gateway.url, { apiKey: TENANT_A.apiKey, query: BALANCES });
  expect(answer.status).toBe(200);
  // The request's line is written once its answer is gone: SIGTERM drains, and it is out.
  gateway.child.kill('SIGTERM');
  await gateway.exited;
  return gateway.output().split('\n');
}

describe('log lines', () => {
  it('LOG_FORMAT=pretty: a readable line per request, no JSON, the key never in it', async () => {
    const lines = await outputAfterOneRequest({ LOG_FORMAT: 'pretty' });
    const request = lines.find((line) => / INFO: request /.test(line));
    expect(request, lines.join('\n')).toMatch(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: request \{.*"method":"POST","path":"\/graphql","status":200/,
    );
    expect(lines.filter((line) => line.startsWith('{"level":'))).toEqual([]);
    expect(lines.join('\n')).not.toContain(TENANT_A.apiKey);
  });

  it('on a pipe without LOG_FORMAT: one JSON object a line, as before', async () => {
    const lines = await outputAfterOneRequest({});
    const json = lines
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(json.find((line) => line['msg'] === 'request')).toMatchObject({
      level: 30,
      method: 'POST',
      path: '/graphql',
      status: 200,
    });
    expect(lines.some((line) => / INFO: /.test(line))).toBe(false);
  });

  // ADR 0007's guarantee, in both formats. Buffered or asynchronous writes would hold all but
  // the first lines behind a write in flight, and the kill would take them.
  it.each([
    { format: 'json', stepOf: /"step":(\d+),"msg":"line"/g },
    { format: 'pretty', stepOf: /INFO: line \{"step":(\d+)\}/g },
  ])(
    '$format lines are written before the call returns: a SIGKILL right after loses none',
    async ({ format, stepOf }) => {
      const script = [
        "import { createLogger } from './lib/logging/logger.ts';",
        `const log = createLogger({ level: 'info', format: '${format}' });`,
        `for (let step = 1; step <= ${KILLED_AFTER_LINES}; step++) log.info({ step }, 'line');`,
        "process.kill(process.pid, 'SIGKILL');",
      ].join('\n');
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', script],
        {
          cwd: new URL('../..', import.meta.url).pathname,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const signal = await new Promise((resolve) =>
        child.once('close', (_code, sig) => resolve(sig)),
      );
      expect(signal).toBe('SIGKILL');
      const steps = [...output.matchAll(stepOf)].map((m) => Number(m[1]));
      expect(steps).toEqual(Array.from({ length: KILLED_AFTER_LINES }, (_, i) => i + 1));
    },
  );
});
