import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.ts';
import { SERVICE_NAMES, topologyOf } from '../../app/topology.ts';

const TOKEN = 'itok_test_0000000000000000';
const PROVIDER_URL = 'http://127.0.0.1:4101/trpc';
const PAYMENTS_URL = 'http://127.0.0.1:4102/trpc';
/** The gateway's process when payments runs apart: the services that stay with it. */
const GATEWAY_SIDE = 'gateway,ledger,notifications,tenants';

/** The one line a start refuses with, or null when the configuration loads. */
function refusal(env: NodeJS.ProcessEnv): string | null {
  try {
    loadConfig(env);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

describe('SERVICES and SERVICE_URLS', () => {
  it('run the whole stack by default, as npm start always has', () => {
    expect([...topologyOf(loadConfig({})).runs]).toEqual([...SERVICE_NAMES]);
    expect(loadConfig({}).serviceUrls.size).toBe(0);
  });

  it('run all but the services SERVICE_URLS places elsewhere when SERVICES is unset', () => {
    const config = loadConfig({ SERVICE_URLS: `provider=${PROVIDER_URL}`, INTERNAL_TOKEN: TOKEN });
    expect([...topologyOf(config).runs]).toEqual(SERVICE_NAMES.filter((n) => n !== 'provider'));
  });

  it('run the gateway with the provider service reached at its URL', () => {
    const config = loadConfig({
      SERVICES: 'gateway,payments,ledger,notifications,tenants,ops',
      SERVICE_URLS: `provider=${PROVIDER_URL}/`,
      INTERNAL_TOKEN: TOKEN,
    });
    expect(topologyOf(config).runs.has('provider')).toBe(false);
    expect(config.serviceUrls.get('provider')).toBe(PROVIDER_URL);
  });

  it('run the provider service alone on INTERNAL_PORT', () => {
    const config = loadConfig({
      SERVICES: 'provider',
      INTERNAL_PORT: '4101',
      INTERNAL_TOKEN: TOKEN,
    });
    expect([...topologyOf(config).runs]).toEqual(['provider']);
  });

  it('run the payments service on INTERNAL_PORT, reaching the provider at its URL', () => {
    const config = loadConfig({
      SERVICES: 'payments',
      SERVICE_URLS: `provider=${PROVIDER_URL}`,
      INTERNAL_PORT: '4102',
      INTERNAL_TOKEN: TOKEN,
    });
    expect([...topologyOf(config).runs]).toEqual(['payments']);
  });

  it('run payments and provider together, apart from the gateway', () => {
    const config = loadConfig({
      SERVICES: 'payments,provider',
      INTERNAL_PORT: '4102',
      INTERNAL_TOKEN: TOKEN,
    });
    expect([...topologyOf(config).runs]).toEqual(['payments', 'provider']);
  });

  it('run the gateway with payments elsewhere, needing no provider: only payments calls it', () => {
    const config = loadConfig({
      SERVICES: GATEWAY_SIDE,
      SERVICE_URLS: `payments=${PAYMENTS_URL}`,
      INTERNAL_TOKEN: TOKEN,
    });
    expect(topologyOf(config).runs.has('payments')).toBe(false);
    expect(config.serviceUrls.get('payments')).toBe(PAYMENTS_URL);
  });

  it('run every service in a process of its own, the gateway reaching each at its URL', () => {
    const urls = ['payments', 'tenants', 'ledger', 'notifications'].map(
      (name, i) => `${name}=http://127.0.0.1:${4110 + i}/trpc`,
    );
    const gateway = loadConfig({
      SERVICES: 'gateway',
      SERVICE_URLS: urls.join(','),
      INTERNAL_TOKEN: TOKEN,
    });
    expect([...topologyOf(gateway).runs]).toEqual(['gateway']);
    const backOffice = loadConfig({
      SERVICES: 'ledger,notifications,tenants,ops',
      SERVICE_URLS: `provider=${PROVIDER_URL}`,
      INTERNAL_PORT: '4111',
      INTERNAL_TOKEN: TOKEN,
    });
    expect(topologyOf(backOffice).runs.has('gateway')).toBe(false);
  });

  it.each([
    [
      { SERVICES: GATEWAY_SIDE, INTERNAL_TOKEN: TOKEN },
      /does not run payments here and SERVICE_URLS gives no URL for it/,
    ],
    [
      { SERVICES: 'payments', INTERNAL_PORT: '4102', INTERNAL_TOKEN: TOKEN },
      /does not run provider here and SERVICE_URLS gives no URL for it: add provider=/,
    ],
    [
      { SERVICES: 'payments', SERVICE_URLS: `provider=${PROVIDER_URL}`, INTERNAL_TOKEN: TOKEN },
      /^SERVICES=payments serves its procedures on INTERNAL_PORT, which is not set/,
    ],
    [
      { SERVICES: 'gateway,ledger,tenants,ops', SERVICE_URLS: `payments=${PAYMENTS_URL}` },
      /^SERVICES runs ledger without notifications: the outbox dispatcher they share/,
    ],
    [
      { SERVICES: 'gateway', SERVICE_URLS: `payments=${PAYMENTS_URL}`, INTERNAL_TOKEN: TOKEN },
      /does not run tenants, ledger, notifications here and SERVICE_URLS gives no URL for it/,
    ],
    [
      { SERVICES: 'ops', INTERNAL_PORT: '4103', INTERNAL_TOKEN: TOKEN },
      /does not run provider here and SERVICE_URLS gives no URL for it/,
    ],
    [
      { SERVICE_URLS: `gateway=${PAYMENTS_URL}`, INTERNAL_TOKEN: TOKEN },
      /^SERVICE_URLS gives the gateway a URL, but no service calls the gateway/,
    ],
    [
      { SERVICES: 'gateway,payments,ledger,notifications,tenants,ops', INTERNAL_TOKEN: TOKEN },
      /does not run provider here and SERVICE_URLS gives no URL for it/,
    ],
    [
      { SERVICES: 'all', SERVICE_URLS: `provider=${PROVIDER_URL}` },
      /gives provider a URL, but SERVICES runs it here/,
    ],
    [
      { SERVICES: 'provider', INTERNAL_TOKEN: TOKEN },
      /serves its procedures on INTERNAL_PORT, which is not set/,
    ],
    [{ SERVICES: 'provider', INTERNAL_PORT: '4101' }, /needs INTERNAL_TOKEN/],
    [
      {
        SERVICES: 'gateway,payments,ledger,notifications,tenants,ops',
        SERVICE_URLS: `provider=${PROVIDER_URL}`,
      },
      /SERVICE_URLS needs INTERNAL_TOKEN/,
    ],
    [
      {
        SERVICES: 'gateway,payments,ledger,notifications,tenants,ops',
        SERVICE_URLS: `provider=${PROVIDER_URL}`,
        INTERNAL_TOKEN: TOKEN,
        PSP_URL: 'http://127.0.0.1:9',
      },
      /PSP_URL is read by the process that runs the provider service/,
    ],
    [{ SERVICES: 'gateway,billing' }, /^SERVICES names an unknown service "billing"/],
    [{ SERVICE_URLS: 'provider' }, /^SERVICE_URLS must be name=url/],
    [{ SERVICE_URLS: 'provider=ftp://h/trpc' }, /^SERVICE_URLS gives provider a ftp: URL/],
    [
      { SERVICE_URLS: `provider=${PROVIDER_URL},provider=${PROVIDER_URL}` },
      /^SERVICE_URLS names provider twice/,
    ],
  ])('refuse %j with one line', (env, line) => {
    const message = refusal(env);
    expect(message).toMatch(line);
    expect(message).not.toContain('\n');
  });
});
