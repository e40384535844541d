import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.ts';

/**
 * WEBHOOK_ALLOWED_HOSTS as the configuration reads it. Kept here, apart from the policy's table
 * beside services/notifications/webhook-url.policy.ts, because services/ must not import the
 * gateway's config (src/).
 */
describe('WEBHOOK_ALLOWED_HOSTS', () => {
  it('is empty by default', () => {
    const config = loadConfig({});
    expect(config.webhookAllowList.hosts.size).toBe(0);
    expect(config.webhookAllowList.ranges).toHaveLength(0);
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
