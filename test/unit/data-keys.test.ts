import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Keyring } from '../../lib/crypto/keyring.ts';
import { ConfigInvalidError } from '../../lib/errors.ts';
import { DATA_KEYS_FILE_NAME, dataKeyring } from '../../app/data-keys.ts';

const AAD = Buffer.from('row');
const CONFIGURED = Keyring.parse(`k1:${Buffer.alloc(32, 0x33).toString('base64')}`);
let dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

function tempDataDir(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'pgw-data-keys-')), '.data');
  dirs.push(dir);
  return dir;
}

describe('where the data keys come from at start', () => {
  it('DATA_ENCRYPTION_KEYS when set, whatever the database', () => {
    const dataDir = tempDataDir();
    const warnings: string[] = [];
    const { keyring, source } = dataKeyring(
      { dataEncryptionKeys: CONFIGURED, databaseUrl: 'postgres://db/payments', nodeEnv: undefined },
      { dataDir, warn: (line) => warnings.push(line) },
    );
    expect(keyring).toBe(CONFIGURED);
    expect(source).toBe('DATA_ENCRYPTION_KEYS');
    expect(warnings).toEqual([]);
  });

  it('embedded mode: a key generated once, kept in the data directory (0600), reused', () => {
    const dataDir = tempDataDir();
    const local = { dataDir, warn: () => undefined };
    const config = { dataEncryptionKeys: undefined, databaseUrl: undefined, nodeEnv: undefined };
    const first = dataKeyring(config, local);
    expect(first.source).toMatch(/generated at this start/);
    const file = join(dataDir, DATA_KEYS_FILE_NAME);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toMatch(/^local1:[A-Za-z0-9+/]{43}=\n$/);
    const sealed = first.keyring.seal('answer', AAD);
    const again = dataKeyring(config, local);
    expect(again.source).toBe(file);
    expect(again.keyring.open(sealed, AAD, 'an answer')).toBe('answer');
  });

  it.each([undefined, 'production', 'staging'])(
    'DATABASE_URL without DATA_ENCRYPTION_KEYS under NODE_ENV=%s: refuses, naming the variable',
    (nodeEnv) => {
      const dataDir = tempDataDir();
      const start = () =>
        dataKeyring(
          { dataEncryptionKeys: undefined, databaseUrl: 'postgres://db/payments', nodeEnv },
          { dataDir, warn: () => undefined },
        );
      expect(start).toThrow(ConfigInvalidError);
      expect(start).toThrow(/^DATA_ENCRYPTION_KEYS is not set: with DATABASE_URL/);
    },
  );

  it.each(['test', 'development'])(
    'DATABASE_URL without DATA_ENCRYPTION_KEYS under NODE_ENV=%s: a kept key, and a warning',
    (nodeEnv) => {
      const dataDir = tempDataDir();
      const warnings: string[] = [];
      const { keyring } = dataKeyring(
        { dataEncryptionKeys: undefined, databaseUrl: 'postgres://db/payments', nodeEnv },
        { dataDir, warn: (line) => warnings.push(line) },
      );
      expect(keyring.primaryId).toBe('local1');
      expect(warnings).toEqual([
        expect.stringMatching(/^WARNING: DATA_ENCRYPTION_KEYS is not set/),
      ]);
    },
  );
});
