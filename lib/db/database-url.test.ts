import { describe, expect, it } from 'vitest';
import { DatabaseUrlError, parseDatabaseUrl } from './database-url.ts';

describe('DATABASE_URL with several hosts', () => {
  it('splits what `pg_autoctl show uri` prints into its hosts, in order, and asks for the primary', () => {
    const url = parseDatabaseUrl(
      'postgresql://postgres@127.0.0.1:6101,127.0.0.1:6102/payments?target_session_attrs=read-write&sslmode=disable',
    );
    expect(url.endpoints).toEqual([
      { host: '127.0.0.1', port: 6101 },
      { host: '127.0.0.1', port: 6102 },
    ]);
    expect(url.requirePrimary).toBe(true);
    expect(url.configFor({ host: '127.0.0.1', port: 6102 })).toMatchObject({
      host: '127.0.0.1',
      port: '6102',
      user: 'postgres',
      database: 'payments',
    });
  });

  it('takes hosts and ports as query parameters, and brackets around IPv6', () => {
    expect(
      parseDatabaseUrl('postgresql://u@/db?host=a.internal,b.internal&port=5432,5433').endpoints,
    ).toEqual([
      { host: 'a.internal', port: 5432 },
      { host: 'b.internal', port: 5433 },
    ]);
    expect(parseDatabaseUrl('postgresql://u@[::1]:5432,[::1]:5433/db').endpoints).toEqual([
      { host: '::1', port: 5432 },
      { host: '::1', port: 5433 },
    ]);
  });

  it('keeps the password and options of the URL for every host', () => {
    const url = parseDatabaseUrl('postgres://u:p%40ss@h1,h2:6000/pay?application_name=x');
    expect(url.endpoints).toEqual([
      { host: 'h1', port: 5432 },
      { host: 'h2', port: 6000 },
    ]);
    expect(url.configFor({ host: 'h2', port: 6000 })).toMatchObject({
      password: 'p@ss',
      database: 'pay',
      application_name: 'x',
    });
  });

  it('asks for the primary even without target_session_attrs when there are several hosts', () => {
    expect(parseDatabaseUrl('postgresql://u@h1,h2/db').requirePrimary).toBe(true);
  });

  it('leaves one host without target_session_attrs exactly as pg has always read it', () => {
    const url = parseDatabaseUrl('postgresql://root@/payments?host=/var/run/postgresql');
    expect(url.requirePrimary).toBe(false);
    expect(url.configFor(url.endpoints[0]!)).toMatchObject({
      host: '/var/run/postgresql',
      database: 'payments',
    });
    expect(
      parseDatabaseUrl('postgresql://u@db:5432/p?target_session_attrs=primary').requirePrimary,
    ).toBe(true);
  });

  it('refuses a URL that would send the gateway to a standby, or names a bad port', () => {
    for (const attrs of ['read-only', 'standby', 'prefer-standby']) {
      expect(() =>
        parseDatabaseUrl(`postgresql://u@h1,h2/db?target_session_attrs=${attrs}`),
      ).toThrow(DatabaseUrlError);
    }
    expect(() => parseDatabaseUrl('postgresql://u@h1,h2/db?target_session_attrs=bogus')).toThrow(
      /unknown target_session_attrs=bogus/,
    );
    expect(() => parseDatabaseUrl('postgresql://u@h1:99999,h2/db')).toThrow(/invalid port/);
    expect(() => parseDatabaseUrl('postgresql://u@/db?host=a,b,c&port=1,2')).toThrow(
      /3 hosts and 2 ports/,
    );
  });
});
