import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { loadConfig } from '../../app/config.ts';
import { startupBanner } from '../../app/startup-banner.ts';

const facts = (generatedNow: boolean) => ({
  base: 'http://127.0.0.1:4000',
  internalBase: 'http://127.0.0.1:4001',
  database: 'DATABASE_URL',
  provider: 'https://psp.example',
  dataKeys: 'DATA_ENCRYPTION_KEYS (sealing with "k1")',
  internalToken: { value: 'itok_synthetic_00000000000000', generatedNow },
  explorer: { state: 'ready' as const },
  webhookLoopbackByDefault: false,
  tenants: [
    { name: 'acme', apiKey: { value: 'sk_test_synthetic_0000000000000000', generatedNow } },
  ],
});

describe('the startup banner', () => {
  it('never prints a key or token that came from the environment, only its display prefix', () => {
    const text = startupBanner(facts(false));
    expect(text).not.toContain('sk_test_synthetic_0000000000000000');
    expect(text).not.toContain('itok_synthetic_00000000000000');
    expect(text).toContain('tenant acme: API key (not shown; sk_test_synt…)');
    expect(text).toContain('Bearer (not shown; INTERNAL_TOKEN)');
  });

  it('prints no hash material of a key or token from the environment', () => {
    const text = startupBanner(facts(false));
    for (const secret of ['sk_test_synthetic_0000000000000000', 'itok_synthetic_00000000000000']) {
      for (const encoding of ['hex', 'base64', 'base64url'] as const) {
        const digest = createHash('sha256').update(secret).digest(encoding);
        // Any 8 characters of the digest: a prefix of 48 bits was printed before.
        expect(text).not.toContain(digest.slice(0, 8));
      }
    }
    expect(text).not.toMatch(/sha256/i);
  });

  it('prints what this start generated, once, so the operator can use it', () => {
    const text = startupBanner(facts(true));
    expect(text).toContain('tenant acme: API key sk_test_synthetic_0000000000000000');
    expect(text).toContain('Bearer itok_synthetic_00000000000000');
  });

  it('names the file a kept internal token is in, on the starts after the one that made it', () => {
    const kept = {
      value: 'itok_synthetic_00000000000000',
      generatedNow: false,
      keptIn: '/c/.data/internal-token',
    };
    const text = startupBanner({ ...facts(false), internalToken: kept });
    expect(text).not.toContain('itok_synthetic_00000000000000');
    expect(text).toContain('Bearer (not shown; /c/.data/internal-token)');
  });

  it('says where the explorer is, or why it is not served', () => {
    expect(startupBanner(facts(false))).toContain(
      'explorer:  http://127.0.0.1:4000/graphql in a browser',
    );
    const off = startupBanner({ ...facts(false), explorer: { state: 'off' } });
    expect(off).toContain('explorer:  off (EXPLORER=false)');
  });

  it('says, in one line, that embedded mode lets webhooks reach loopback and what changes it', () => {
    const line = 'webhooks:  loopback allowed (embedded mode); set WEBHOOK_ALLOWED_HOSTS to change';
    const bannerOf = (env: NodeJS.ProcessEnv) =>
      startupBanner({
        ...facts(false),
        webhookLoopbackByDefault: loadConfig(env).webhookLoopbackByDefault,
      });
    const embedded = bannerOf({});
    expect(embedded).toContain(`\n  ${line}\n`);
    expect(embedded.split('\n').filter((l) => l.includes('webhooks:'))).toHaveLength(1);
    // With DATABASE_URL, or with the variable set, the rules are the variable's: no such line.
    expect(bannerOf({ DATABASE_URL: 'postgresql://root@127.0.0.1:5432/payments' })).not.toContain(
      'webhooks:',
    );
    expect(bannerOf({ WEBHOOK_ALLOWED_HOSTS: '10.0.0.0/8' })).not.toContain('webhooks:');
  });
});
