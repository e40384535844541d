import { describe, expect, it } from 'vitest';
import { AppError } from '../../lib/errors.ts';
import { assertPlainHttpAllowed } from './webhook-egress.client.ts';
import {
  addressRefusal,
  EMPTY_WEBHOOK_ALLOW_LIST,
  judgeWebhookUrl,
  parseWebhookAllowList,
  type WebhookAllowList,
} from './webhook-url.policy.ts';

/**
 * The webhook URL policy over every address class it must refuse (SSRF): what registration
 * answers for a URL as written, and what delivery answers for an address a name resolved to.
 */
const REFUSED = 'WEBHOOK_URL_NOT_ALLOWED';
const INVALID = 'BAD_USER_INPUT';

function verdict(url: string, allow: WebhookAllowList = EMPTY_WEBHOOK_ALLOW_LIST): string {
  try {
    judgeWebhookUrl(url, allow);
    return 'allowed';
  } catch (error) {
    if (error instanceof AppError) return error.code;
    throw error;
  }
}

describe('registration, with an empty allow-list', () => {
  it.each([
    // loopback
    ['https://127.0.0.1/hooks', REFUSED],
    ['https://127.255.255.254/hooks', REFUSED],
    ['https://[::1]/hooks', REFUSED],
    ['http://127.0.0.1:8080/hooks', REFUSED],
    // RFC 1918
    ['https://10.0.0.1/', REFUSED],
    ['https://10.255.255.255/', REFUSED],
    ['https://172.16.0.1/', REFUSED],
    ['https://172.31.255.254/', REFUSED],
    ['https://192.168.1.1/', REFUSED],
    // link-local, the cloud metadata service among them
    ['https://169.254.169.254/latest/meta-data/', REFUSED],
    ['https://[fe80::1]/', REFUSED],
    // CGNAT
    ['https://100.64.0.1/', REFUSED],
    ['https://100.127.255.254/', REFUSED],
    // unique-local
    ['https://[fc00::1]/', REFUSED],
    ['https://[fd12:3456:789a::1]/', REFUSED],
    // multicast
    ['https://224.0.0.1/', REFUSED],
    ['https://239.255.255.250/', REFUSED],
    ['https://[ff02::1]/', REFUSED],
    // unspecified, broadcast, reserved
    ['https://0.0.0.0/', REFUSED],
    ['https://0.1.2.3/', REFUSED],
    ['https://[::]/', REFUSED],
    ['https://255.255.255.255/', REFUSED],
    ['https://240.0.0.1/', REFUSED],
    ['https://192.0.2.10/', REFUSED],
    ['https://198.18.0.1/', REFUSED],
    // IPv6 carrying an IPv4 address inside
    ['https://[::ffff:a9fe:a9fe]/', REFUSED],
    ['https://[::ffff:169.254.169.254]/', REFUSED],
    ['https://[::ffff:127.0.0.1]/', REFUSED],
    ['https://[::ffff:10.0.0.1]/', REFUSED],
    ['https://[::127.0.0.1]/', REFUSED], // IPv4-compatible
    ['https://[::a9fe:a9fe]/', REFUSED],
    ['https://[64:ff9b::a9fe:a9fe]/', REFUSED], // NAT64
    ['https://[64:ff9b:1::a00:1]/', REFUSED], // local-use NAT64
    ['https://[2002:a9fe:a9fe::1]/', REFUSED], // 6to4
    ['https://[2001:0:a9fe:a9fe::1]/', REFUSED], // Teredo
    // IPv4 not written as four decimal parts: WHATWG turns them into dotted-quad
    ['http://2852039166/', REFUSED], // decimal 169.254.169.254
    ['https://2130706433/', REFUSED], // decimal 127.0.0.1
    ['https://0x7f000001/', REFUSED], // hex
    ['https://0xa9fe.0xa9fe/', REFUSED], // hex parts WHATWG refuses to parse
    ['https://0xa9.0xfe.0xa9.0xfe/', REFUSED],
    ['https://0251.0376.0251.0376/', REFUSED], // octal
    ['https://0177.0.0.1/', REFUSED],
    ['https://127.1/', REFUSED], // short
    ['https://10.1/', REFUSED],
    ['https://%31%32%37.0.0.1/', REFUSED], // percent-encoded
    ['https://１２７.０.０.１/', REFUSED], // full-width digits
    ['https:2852039166/', REFUSED], // no slashes: still a special-scheme host
    ['https://134744072/', REFUSED], // 8.8.8.8, public, but never written so
    ['https://8.8.8.8./', REFUSED], // trailing dot
    // loopback and internal names
    ['https://localhost/', REFUSED],
    ['https://LOCALHOST./', REFUSED],
    ['https://api.localhost/', REFUSED],
    ['https://metadata.google.internal/computeMetadata/v1/', REFUSED],
    ['https://printer.local/', REFUSED],
    ['https://redis/', REFUSED],
    // public addresses and names
    ['https://8.8.8.8/hooks', 'allowed'],
    ['https://93.184.216.34:8443/hooks?x=1', 'allowed'],
    ['https://[2001:4860:4860::8888]/hooks', 'allowed'],
    ['https://hooks.example.com/payments', 'allowed'],
    ['https://does-not-resolve.invalid/hooks', 'allowed'], // no DNS at registration
    // not a webhook URL at all (unchanged rules)
    ['http://example.com/hooks', INVALID], // plain http to a host not allow-listed
    ['http://8.8.8.8/hooks', INVALID],
    ['ftp://example.com/hooks', INVALID],
    ['file:///etc/passwd', INVALID],
    ['https://user:secret@example.com/hooks', INVALID],
    ['not a url', INVALID],
    [`https://example.com/${'a'.repeat(2_048)}`, INVALID],
    // ports: 80, 443 and 1024-65535, save those of internal services
    ['https://hooks.example.com:443/hooks', 'allowed'],
    ['https://hooks.example.com:80/hooks', 'allowed'],
    ['https://hooks.example.com:1024/hooks', 'allowed'],
    ['https://hooks.example.com:65535/hooks', 'allowed'],
    ['https://hooks.example.com:0/hooks', REFUSED],
    ['https://hooks.example.com:22/hooks', REFUSED],
    ['https://hooks.example.com:25/hooks', REFUSED],
    ['https://hooks.example.com:1023/hooks', REFUSED],
    ['https://8.8.8.8:5432/hooks', REFUSED],
    ['https://hooks.example.com:6379/hooks', REFUSED],
    ['https://hooks.example.com:65536/hooks', INVALID], // not a URL
  ])('%s → %s', (url, expected) => {
    expect(verdict(url)).toBe(expected);
  });

  it('names the port and the rule in the message', () => {
    expect(() =>
      judgeWebhookUrl('https://hooks.example.com:22/', EMPTY_WEBHOOK_ALLOW_LIST),
    ).toThrow(
      /^webhook URL not allowed: port 22 is not one webhooks may use \(80, 443 or 1024-65535\)/,
    );
    expect(() =>
      judgeWebhookUrl('https://hooks.example.com:5432/', EMPTY_WEBHOOK_ALLOW_LIST),
    ).toThrow(/port 5432 is that of an internal service/);
  });
});

describe('registration, with WEBHOOK_ALLOWED_HOSTS', () => {
  const allow = parseWebhookAllowList('127.0.0.1/32, ::1/128, 10.20.0.0/16, Sink.Test');
  it.each([
    ['http://127.0.0.1:4321/hooks', 'allowed'], // plain http too, to an allowed address
    ['https://127.0.0.1/hooks', 'allowed'],
    ['http://[::1]:4321/hooks', 'allowed'],
    ['https://[::ffff:127.0.0.1]/hooks', 'allowed'], // the IPv4 address it maps is listed
    ['https://10.20.3.4/hooks', 'allowed'],
    ['http://sink.test:4321/hooks', 'allowed'],
    ['http://SINK.TEST./hooks', 'allowed'],
    // outside the listed ranges and names
    ['https://127.0.0.2/hooks', REFUSED],
    ['https://10.21.0.1/hooks', REFUSED],
    ['https://169.254.169.254/', REFUSED],
    ['https://localhost/hooks', REFUSED],
    ['https://other.sink.test/hooks', 'allowed'], // a public-looking name: https, judged at delivery
    ['http://other.sink.test/hooks', INVALID], // but not over plain http
    // non-canonical forms of a listed address stay refused
    ['http://127.1:4321/hooks', REFUSED],
    ['http://2130706433:4321/hooks', REFUSED],
    // credentials stay refused whatever the host
    ['http://user:pw@127.0.0.1:4321/hooks', INVALID],
    // a listed host may use any port but 0; another host keeps the port rule
    ['http://127.0.0.1:22/hooks', 'allowed'],
    ['http://sink.test:5432/hooks', 'allowed'],
    ['http://127.0.0.1:0/hooks', REFUSED],
    ['https://other.sink.test:22/hooks', REFUSED],
  ])('%s → %s', (url, expected) => {
    expect(verdict(url, allow)).toBe(expected);
  });

  it('stores the URL as WHATWG serialises it', () => {
    expect(judgeWebhookUrl('HTTP://127.0.0.1:4321/a b', allow)).toBe('http://127.0.0.1:4321/a%20b');
  });

  it('names the reason in the message', () => {
    expect(() => judgeWebhookUrl('https://[::ffff:a9fe:a9fe]/', allow)).toThrow(
      /::ffff:a9fe:a9fe is an IPv4-mapped link-local address/,
    );
    expect(() => judgeWebhookUrl('http://2852039166/', allow)).toThrow(
      /"2852039166" is not a canonical IPv4 address \(it means 169\.254\.169\.254\)/,
    );
  });
});

describe('what a refusal tells the merchant', () => {
  function messageOf(url: string, allow: WebhookAllowList = EMPTY_WEBHOOK_ALLOW_LIST): string {
    try {
      judgeWebhookUrl(url, allow);
    } catch (error) {
      if (error instanceof AppError && error.code === REFUSED) return error.message;
      throw error;
    }
    throw new Error(`${url} was allowed`);
  }

  it.each([
    [
      'http://127.0.0.1:4242/hooks',
      'webhook URL not allowed: 127.0.0.1 is a loopback address; to allow it set WEBHOOK_ALLOWED_HOSTS=127.0.0.1/32 and restart',
    ],
    [
      'http://[::1]:3000/hooks',
      'webhook URL not allowed: ::1 is a loopback address; to allow it set WEBHOOK_ALLOWED_HOSTS=::1/128 and restart',
    ],
    [
      'http://localhost:3000/hooks',
      'webhook URL not allowed: localhost is a loopback name; to allow it set WEBHOOK_ALLOWED_HOSTS=localhost and restart',
    ],
    [
      'https://10.1.2.3/hooks',
      'webhook URL not allowed: 10.1.2.3 is a private address; to allow it set WEBHOOK_ALLOWED_HOSTS=10.1.2.3/32 and restart',
    ],
    [
      'https://hooks.example.com:22/hooks',
      'webhook URL not allowed: port 22 is not one webhooks may use (80, 443 or 1024-65535); to allow it set WEBHOOK_ALLOWED_HOSTS=hooks.example.com and restart',
    ],
    // Nothing allows these: the message says what to do instead.
    [
      'https://hooks.example.com:0/hooks',
      'webhook URL not allowed: port 0 is not a destination; use a public https URL',
    ],
    [
      'http://127.1/hooks',
      'webhook URL not allowed: "127.1" is not a canonical IPv4 address (it means 127.0.0.1); use a public https URL',
    ],
  ])('%s: names the setting that would allow it', (url, message) => {
    expect(messageOf(url)).toBe(message);
  });

  it.each([
    'http://127.0.0.1:4242/hooks',
    'https://127.0.0.2/hooks',
    'http://[::1]:3000/hooks',
    'https://[::ffff:a9fe:a9fe]/hooks',
    'https://[fe80::1]/hooks',
    'https://169.254.169.254/latest',
    'http://localhost:3000/hooks',
    'https://printer.local/hooks',
    'https://redis/hooks',
    'https://hooks.example.com:22/hooks',
    'https://8.8.8.8:5432/hooks',
  ])('%s: the entry it names, once set, allows the URL', (url) => {
    const entry = /WEBHOOK_ALLOWED_HOSTS=(\S+) and restart$/.exec(messageOf(url))?.[1];
    expect(entry, messageOf(url)).toBeDefined();
    expect(verdict(url, parseWebhookAllowList(entry))).toBe('allowed');
  });

  it('says the same whatever the allow-list holds: it never shows what the operator listed', () => {
    const listed = parseWebhookAllowList('10.20.0.0/16,hooks.internal.example,fd00::/8');
    for (const url of ['http://127.0.0.1:4242/hooks', 'https://hooks.example.com:22/hooks'])
      expect(messageOf(url, listed)).toBe(messageOf(url));
  });
});

describe('delivery: addresses a name resolved to', () => {
  const allow = parseWebhookAllowList('127.0.0.1/32');
  it.each([
    ['127.0.0.1', EMPTY_WEBHOOK_ALLOW_LIST, 'loopback'],
    ['::1', EMPTY_WEBHOOK_ALLOW_LIST, 'loopback'],
    ['10.0.0.1', EMPTY_WEBHOOK_ALLOW_LIST, 'private'],
    ['172.16.5.4', EMPTY_WEBHOOK_ALLOW_LIST, 'private'],
    ['192.168.0.1', EMPTY_WEBHOOK_ALLOW_LIST, 'private'],
    ['169.254.169.254', EMPTY_WEBHOOK_ALLOW_LIST, 'linkLocal'],
    ['100.64.0.1', EMPTY_WEBHOOK_ALLOW_LIST, 'carrierGradeNat'],
    ['fc00::1', EMPTY_WEBHOOK_ALLOW_LIST, 'uniqueLocal'],
    ['fe80::1', EMPTY_WEBHOOK_ALLOW_LIST, 'linkLocal'],
    ['224.0.0.251', EMPTY_WEBHOOK_ALLOW_LIST, 'multicast'],
    ['ff02::fb', EMPTY_WEBHOOK_ALLOW_LIST, 'multicast'],
    ['0.0.0.0', EMPTY_WEBHOOK_ALLOW_LIST, 'unspecified'],
    ['::', EMPTY_WEBHOOK_ALLOW_LIST, 'unspecified'],
    ['255.255.255.255', EMPTY_WEBHOOK_ALLOW_LIST, 'broadcast'],
    ['::ffff:a9fe:a9fe', EMPTY_WEBHOOK_ALLOW_LIST, 'ipv4Mapped linkLocal'],
    ['::ffff:127.0.0.1', EMPTY_WEBHOOK_ALLOW_LIST, 'ipv4Mapped loopback'],
    ['::7f00:1', EMPTY_WEBHOOK_ALLOW_LIST, 'ipv4Compatible'],
    ['64:ff9b::a00:1', EMPTY_WEBHOOK_ALLOW_LIST, 'rfc6052'],
    ['2002:a00:1::1', EMPTY_WEBHOOK_ALLOW_LIST, '6to4'],
    ['8.8.8.8', EMPTY_WEBHOOK_ALLOW_LIST, undefined],
    ['2606:4700:4700::1111', EMPTY_WEBHOOK_ALLOW_LIST, undefined],
    ['127.0.0.1', allow, undefined],
    ['::ffff:127.0.0.1', allow, undefined],
    ['127.0.0.2', allow, 'loopback'],
    ['::1', allow, 'loopback'],
  ])('%s → %s', (address, list, expected) => {
    expect(addressRefusal(address, list)).toBe(expected);
  });
});

describe('delivery over plain http', () => {
  const resolves =
    (...addresses: string[]) =>
    () =>
      Promise.resolve(addresses.map((address) => ({ address, family: 4 })));

  it('refuses a name whose addresses are allowed but not listed: nothing signed goes out in clear', async () => {
    await expect(
      assertPlainHttpAllowed(
        'hooks.example',
        parseWebhookAllowList('127.0.0.1/32'),
        resolves('93.184.216.34'),
      ),
    ).rejects.toThrow(
      'address not allowed: 93.184.216.34 (plain http to an address not allow-listed)',
    );
  });

  it('accepts a listed name, or a name all of whose addresses are listed', async () => {
    await expect(
      assertPlainHttpAllowed(
        'hooks.example',
        parseWebhookAllowList('hooks.example'),
        resolves('93.184.216.34'),
      ),
    ).resolves.toBeUndefined();
    await expect(
      assertPlainHttpAllowed(
        'sink.test',
        parseWebhookAllowList('127.0.0.1/32'),
        resolves('127.0.0.1'),
      ),
    ).resolves.toBeUndefined();
    await expect(
      assertPlainHttpAllowed(
        'sink.test',
        parseWebhookAllowList('127.0.0.1/32'),
        resolves('127.0.0.1', '127.0.0.2'),
      ),
    ).rejects.toThrow('127.0.0.2');
  });
});
