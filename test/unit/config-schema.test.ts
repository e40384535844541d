import { describe, expect, it } from 'vitest';
import { configVariables } from '../../app/config-schema.ts';
import { defaultConfig, loadConfig } from '../../app/config.ts';
import { ormConnection } from '../../migrations/orm-connection.ts';

const variables = configVariables();

describe('the configuration schema', () => {
  it('documents every variable once', () => {
    const names = variables.map((v) => v.env);
    expect(new Set(names).size).toBe(names.length);
    for (const v of variables) expect(v.description.length).toBeGreaterThan(10);
  });

  it('shows, for each numeric default, the value a start with no environment runs with', () => {
    const defaults = defaultConfig() as Record<string, unknown>;
    for (const v of variables) {
      const value = defaults[v.key];
      if (typeof value === 'number') expect(v.shown, v.env).toBe(String(value));
    }
  });

  const integers = variables.filter(
    (v) =>
      typeof (defaultConfig() as Record<string, unknown>)[v.key] === 'number' ||
      /PER_SECOND|BURST|INTERNAL_PORT/.test(v.env),
  );
  it.each(
    integers.flatMap((v) => [
      [v.env, 'abc'],
      [v.env, '1.5'],
      [v.env, '-99999'],
    ]),
  )('refuses %s=%s in one line naming it', (name, raw) => {
    expect(() => loadConfig({ [name]: raw })).toThrow(new RegExp(`^${name} `));
  });

  it.each([
    ['PSP_URL', 'not a url'],
    ['LOG_LEVEL', 'loud'],
    ['BOOTSTRAP_TENANTS', 'acme'],
    ['DATA_ENCRYPTION_KEYS', 'k1:short'],
    ['WEBHOOK_ALLOWED_HOSTS', '10.0.0.0/33'],
    ['INTERNAL_TOKEN', 'short'],
    ['EXPLORER', 'maybe'],
  ])('refuses %s=%j in one line naming it', (name, raw) => {
    let message = '';
    try {
      loadConfig({ [name]: raw });
    } catch (error) {
      message = error instanceof Error ? error.message : '';
    }
    expect(message).toMatch(new RegExp(`^${name}\\b`));
    expect(message).not.toContain('\n');
  });

  it('refuses a bootstrap key shorter than 32 characters in one line, without the key', () => {
    const short = 'sk_test_only_23_chars_x';
    let message = '';
    try {
      loadConfig({ BOOTSTRAP_TENANTS: `acme:sk_test_synthetic_0000000000000000,beta:${short}` });
    } catch (error) {
      message = error instanceof Error ? error.message : '';
    }
    expect(message).toBe(
      'BOOTSTRAP_TENANTS: the API key of tenant 2 (beta) is 23 characters; at least 32 are required (e.g. sk_live_$(openssl rand -hex 24))',
    );
    expect(message).not.toContain(short);
    expect(loadConfig({ BOOTSTRAP_TENANTS: `acme:${'k'.repeat(32)}` }).bootstrapTenants).toEqual([
      { name: 'acme', apiKey: 'k'.repeat(32) },
    ]);
  });

  it('refuses a lease too short for its heartbeat, and keeps leases of a second and more', () => {
    expect(() => loadConfig({ LEASE_MS: '999' })).toThrow(
      /^LEASE_MS must be at least 1000 ms: an owner renews its lease every third of it/,
    );
    expect(loadConfig({ LEASE_MS: '1000' }).leaseMs).toBe(1_000);
    expect(loadConfig({ LEASE_MS: '2000' }).leaseMs).toBe(2_000);
  });

  it('serves the explorer unless EXPLORER turns it off', () => {
    expect(defaultConfig().explorer).toBe(true);
    expect(loadConfig({ EXPLORER: 'false' }).explorer).toBe(false);
    expect(loadConfig({ EXPLORER: 'true' }).explorer).toBe(true);
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ PORT: '', LOG_LEVEL: '' })).toEqual(defaultConfig());
  });
});

describe('DATABASE_URL in every form pg accepts', () => {
  it('hands MikroORM a unix socket as its host', () => {
    // The same fields again for the driver, which also gets what MikroORM does not read
    // (TLS, options: test/integration/orm-connection-settings.test.ts).
    expect(ormConnection('postgresql://root@/payments?host=/var/run/postgresql')).toEqual({
      host: '/var/run/postgresql',
      user: 'root',
      dbName: 'payments',
      driverOptions: {
        connection: { host: '/var/run/postgresql', user: 'root', database: 'payments' },
      },
    });
    expect(ormConnection('postgres://u:p%40ss@db.internal:6543/pay')).toEqual({
      host: 'db.internal',
      port: 6543,
      user: 'u',
      password: 'p@ss',
      dbName: 'pay',
      driverOptions: {
        connection: {
          host: 'db.internal',
          port: '6543',
          user: 'u',
          password: 'p@ss',
          database: 'pay',
        },
      },
    });
  });
});
