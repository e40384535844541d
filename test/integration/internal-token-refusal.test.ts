import {
  createTRPCClient,
  httpBatchLink,
  httpBatchStreamLink,
  httpLink,
  TRPCClientError,
} from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppRouter } from '../../services/router.ts';
import { INTERNAL_TOKEN_REQUIRED } from '../../gateway/http/trpc-refusal.ts';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.ts';
import {
  freePort,
  startProviderProcess,
  type ProviderProcess,
} from '../support/provider-process.ts';
import { useTestDatabase } from '../support/test-database.ts';
import { INTERNAL_TOKEN } from '../support/test-stack.ts';

/**
 * A caller of /trpc without the internal token, as a developer meets it: tRPC's own client
 * against a started gateway process (and the provider service in one of its own). Each link
 * must raise TRPCClientError with code UNAUTHORIZED and say what to send, never "Unable to
 * transform response from server".
 */
const database = useTestDatabase('internal_token_refusal');
let gateway: GatewayProcess | undefined;
let provider: ProviderProcess | undefined;

beforeAll(async () => {
  gateway = await startGatewayProcess({ databaseUrl: database.url, pspUrl: null });
  // The provider service needs a PSP only once a call is let in; none is here.
  provider = await startProviderProcess({ pspUrl: 'http://127.0.0.1:9', port: await freePort() });
}, 60_000);
afterAll(async () => {
  await gateway?.kill('SIGKILL');
  await provider?.kill('SIGKILL');
});

const LINKS = { httpLink, httpBatchLink, httpBatchStreamLink } as const;
/** No token, a wrong one, and the right one in the wrong scheme. */
const AUTHORIZATIONS: Array<[string, Record<string, string>]> = [
  ['no token', {}],
  ['a wrong token', { authorization: 'Bearer itok_wrong_0000000000000000' }],
  ['the token as Basic', { authorization: `Basic ${INTERNAL_TOKEN}` }],
];

function client(url: string, link: keyof typeof LINKS, headers: Record<string, string>) {
  return createTRPCClient<AppRouter>({ links: [LINKS[link]({ url, headers })] });
}

/** What the call was rejected with; it must be rejected. */
async function refusalOf(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    (value) => {
      throw new Error(`expected a refusal, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

function expectUnauthorized(error: unknown): void {
  expect(error).toBeInstanceOf(TRPCClientError);
  const refused = error as TRPCClientError<AppRouter>;
  expect(refused.message).toBe(INTERNAL_TOKEN_REQUIRED);
  expect(refused.data).toMatchObject({ code: 'UNAUTHORIZED', httpStatus: 401 });
}

describe('/trpc without the internal token answers in tRPC’s shape: UNAUTHORIZED', () => {
  for (const link of Object.keys(LINKS) as Array<keyof typeof LINKS>) {
    it.each(AUTHORIZATIONS)(`the gateway, through ${link}, with %s`, async (_, headers) => {
      const services = client(`${gateway!.url}/trpc`, link, headers);
      const tenantId = '00000000-0000-4000-8000-000000000000';
      // Two calls at once: the batch links send them as one batch, and each gets the refusal.
      const [query, mutation] = await Promise.all([
        refusalOf(services.payments.get.query({ tenantId, id: 'pay_x' })),
        refusalOf(services.ops.reconcile.mutate({ actor: 'nobody' })),
      ]);
      expectUnauthorized(query);
      expectUnauthorized(mutation);
    });
  }

  it.each(AUTHORIZATIONS)('the provider service alone, with %s', async (_, headers) => {
    const services = client(provider!.url, 'httpLink', headers);
    expectUnauthorized(
      await refusalOf(
        services.provider.probeCharge.query({
          idempotencyKey: `provider_payment_${'A'.repeat(43)}`,
          reference: 'order-1',
        }),
      ),
    );
  });

  it('the right token gets through', async () => {
    const services = client(`${gateway!.url}/trpc`, 'httpBatchStreamLink', {
      authorization: `Bearer ${INTERNAL_TOKEN}`,
    });
    const tenantId = '00000000-0000-4000-8000-000000000000';
    expect(await services.payments.get.query({ tenantId, id: 'pay_x' })).toBeNull();
  });
});
