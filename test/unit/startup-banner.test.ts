import { describe, expect, it } from 'vitest';
import { keyFingerprint, startupBanner } from '../../app/startup-banner.ts';

const facts = (generatedNow: boolean) => ({
  base: 'http://127.0.0.1:4000',
  internalBase: 'http://127.0.0.1:4001',
  database: 'DATABASE_URL',
  provider: 'https://psp.example',
  dataKeys: 'DATA_ENCRYPTION_KEYS (sealing with "k1")',
  internalToken: { value: 'itok_synthetic_00000000000000', generatedNow },
  explorer: { state: 'ready' as const },
  tenants: [
    { name: 'acme', apiKey: { value: 'sk_test_synthetic_0000000000000000', generatedNow } },
  ],
});

describe('the startup banner', () => {
  it('never prints a key or token that came from the environment, only its fingerprint', () => {
    const text = startupBanner(facts(false));
    expect(text).not.toContain('sk_test_synthetic_0000000000000000');
    expect(text).not.toContain('itok_synthetic_00000000000000');
    expect(text).toContain(
      `tenant acme: API key (not shown; ${keyFingerprint('sk_test_synthetic_0000000000000000')})`,
    );
  });

  it('prints what this start generated, once, so the operator can use it', () => {
    const text = startupBanner(facts(true));
    expect(text).toContain('tenant acme: API key sk_test_synthetic_0000000000000000');
    expect(text).toContain('Bearer itok_synthetic_00000000000000');
  });

  it('says where the explorer is, or why it is not served', () => {
    expect(startupBanner(facts(false))).toContain(
      'explorer:  http://127.0.0.1:4000/graphql in a browser',
    );
    const off = startupBanner({ ...facts(false), explorer: { state: 'off' } });
    expect(off).toContain('explorer:  off (EXPLORER=false)');
  });

  it('fingerprints reveal no part of the key', () => {
    const key = 'sk_test_synthetic_0000000000000000';
    expect(keyFingerprint(key)).toMatch(/^sha256:[0-9a-f]{12}$/);
    expect(key).not.toContain(keyFingerprint(key).slice('sha256:'.length, 'sha256:'.length + 4));
  });
});
