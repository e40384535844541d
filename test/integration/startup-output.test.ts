import { afterAll, describe, expect, it } from 'vitest';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.ts';
import { useTestDatabase } from '../support/test-database.ts';
import { INTERNAL_TOKEN, TENANT_A, TENANT_B } from '../support/test-stack.ts';

const database = useTestDatabase('startup_output');
let gateway: GatewayProcess | undefined;

afterAll(async () => {
  await gateway?.kill('SIGTERM');
});

describe('npm start output', () => {
  it('names every tenant and holds no secret that came from the environment', async () => {
    gateway = await startGatewayProcess({ databaseUrl: database.url, pspUrl: null });
    const output = gateway.output();
    for (const secret of [TENANT_A.apiKey, TENANT_B.apiKey, INTERNAL_TOKEN])
      expect(output).not.toContain(secret);
    // Named by the display prefix the database keeps in clear; no hash of the key is printed.
    expect(output).toContain(`tenant ${TENANT_A.name}: API key (not shown; sk_test_tena…)`);
    expect(output).toContain(`tenant ${TENANT_B.name}: API key (not shown; sk_test_tena…)`);
    expect(output).not.toMatch(/sha256/i);
  });
});
