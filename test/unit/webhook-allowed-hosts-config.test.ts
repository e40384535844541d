import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.ts';
import { judgeWebhookUrl } from '../../services/notifications/webhook-url.policy.ts';

/**
 * WEBHOOK_ALLOWED_HOSTS as the configuration reads it. Kept here, apart from the policy's table
 * beside services/notifications/webhook-url.policy.ts, because services/ must not import the
 * gateway's config (src/).
 */
describe('WEBHOOK_ALLOWED_HOSTS', () => {
  /** A server of one's own: production rules. */
  const DATABASE_URL = 'postgresql://root@127.0.0.1:5432/payments';

  it('is empty by default with DATABASE_URL', () => {
    const config = loadConfig({ DATABASE_URL });
    expect(config.embedded).toBe(false);
    expect(config.webhookAllowList.hosts.size).toBe(0);
    expect(config.webhookAllowList.ranges).toHaveLength(0);
    expect(config.webhookLoopbackByDefault).toBe(false);
  });

  it('is loopback by default in embedded mode (no DATABASE_URL): 127.0.0.0/8, ::1 and localhost', () => {
    const config = loadConfig({});
    expect(config.embedded).toBe(true);
    expect(config.webhookLoopbackByDefault).toBe(true);
    const list = config.webhookAllowList;
    expect([...list.hosts]).toEqual(['localhost']);
    expect(list.ranges.map(([address, bits]) => `${address.toString()}/${bits}`)).toEqual([
      '127.0.0.0/8',
      '::1/128',
    ]);
  });

  it.each([
    ['http://127.0.0.1:4242/hooks'],
    ['http://127.0.0.1:3000/hooks'],
    ['http://127.9.9.9:8080/hooks'],
    ['http://[::1]:4242/hooks'],
    ['http://localhost:3000/hooks'],
    ['https://localhost/hooks'],
    // As for any host WEBHOOK_ALLOWED_HOSTS lists: any port but 0.
    ['http://127.0.0.1:22/hooks'],
    ['http://127.0.0.1:6379/hooks'],
  ])('embedded mode registers %s; production refuses it', (url) => {
    expect(judgeWebhookUrl(url, loadConfig({}).webhookAllowList)).toBe(url);
    expect(() => judgeWebhookUrl(url, loadConfig({ DATABASE_URL }).webhookAllowList)).toThrow(
      /^webhook URL not allowed: .*; to allow it set WEBHOOK_ALLOWED_HOSTS=\S+ and restart$/,
    );
  });

  it('refuses port 0 and private addresses in embedded mode too', () => {
    const list = loadConfig({}).webhookAllowList;
    expect(() => judgeWebhookUrl('http://127.0.0.1:0/hooks', list)).toThrow(/port 0/);
    expect(() => judgeWebhookUrl('https://10.0.0.1/hooks', list)).toThrow(/private address/);
    expect(() => judgeWebhookUrl('https://169.254.169.254/', list)).toThrow(/link-local/);
  });

  it('an explicit WEBHOOK_ALLOWED_HOSTS wins over the embedded default', () => {
    const config = loadConfig({ WEBHOOK_ALLOWED_HOSTS: '10.1.0.0/16' });
    expect(config.embedded).toBe(true);
    expect(config.webhookLoopbackByDefault).toBe(false);
    expect(judgeWebhookUrl('http://10.1.2.3:3000/hooks', config.webhookAllowList)).toBe(
      'http://10.1.2.3:3000/hooks',
    );
    expect(() => judgeWebhookUrl('http://127.0.0.1:3000/hooks', config.webhookAllowList)).toThrow(
      /127\.0\.0\.1 is a loopback address/,
    );
  });

  it('takes CIDRs, single addresses and hostnames', () => {
    const list = loadConfig({
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1/32,::1/128,localhost, 10.0.0.5 ,fd00::/8',
    }).webhookAllowList;
    expect([...list.hosts]).toEqual(['localhost']);
    expect(list.ranges.map(([address, bits]) => `${address.toString()}/${bits}`)).toEqual([
      '127.0.0.1/32',
      '::1/128',
      '10.0.0.5/32',
      'fd00::/8',
    ]);
  });

  it.each(['127.0.0.1/33', '::1/129', '10.0.0.0/', '127.1', '0x7f000001', 'http://x', 'a b'])(
    'fails the start on a bad entry (%s), naming the variable',
    (entry) => {
      expect(() => loadConfig({ WEBHOOK_ALLOWED_HOSTS: `localhost,${entry}` })).toThrow(
        /^WEBHOOK_ALLOWED_HOSTS: /,
      );
    },
  );
});
