import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigInvalidError } from '../../lib/errors.ts';
import { INTERNAL_TOKEN_FILE_NAME, internalToken } from '../../app/internal-token.ts';

const CONFIGURED = 'itok_synthetic_configured_0000';
let dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

function tempDataDir(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'pgw-internal-token-')), '.data');
  dirs.push(dir);
  return dir;
}

describe('the internal token at start', () => {
  it('embedded: generated once, kept in the data directory (0600), the same at every start', () => {
    const dataDir = tempDataDir();
    const first = internalToken({}, { dataDir });
    const file = join(dataDir, INTERNAL_TOKEN_FILE_NAME);
    expect(first.value).toMatch(/^[\w-]{32}$/);
    expect(first).toEqual({ value: first.value, generatedNow: true, keptIn: file });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toBe(`${first.value}\n`);
    // A restart: the same token, not printed again (the banner names the file instead).
    expect(internalToken({}, { dataDir })).toEqual({
      value: first.value,
      generatedNow: false,
      keptIn: file,
    });
  });

  it('INTERNAL_TOKEN always wins, and nothing is written', () => {
    for (const databaseUrl of [undefined, 'postgres://db/payments']) {
      const dataDir = tempDataDir();
      expect(internalToken({}, { dataDir }).generatedNow).toBe(true); // a kept one exists
      const kept = readFileSync(join(dataDir, INTERNAL_TOKEN_FILE_NAME), 'utf8');
      expect(internalToken({ internalToken: CONFIGURED, databaseUrl }, { dataDir })).toEqual({
        value: CONFIGURED,
        generatedNow: false,
      });
      expect(readFileSync(join(dataDir, INTERNAL_TOKEN_FILE_NAME), 'utf8')).toBe(kept);
    }
  });

  it('DATABASE_URL without INTERNAL_TOKEN: a new one at each start, kept nowhere', () => {
    const dataDir = tempDataDir();
    const config = { databaseUrl: 'postgres://db/payments' };
    const first = internalToken(config, { dataDir });
    const second = internalToken(config, { dataDir });
    expect(first.generatedNow && second.generatedNow).toBe(true);
    expect(first.value).not.toBe(second.value);
    expect(() => statSync(join(dataDir, INTERNAL_TOKEN_FILE_NAME))).toThrow(/ENOENT/);
  });

  it('a kept file that holds no token refuses the start, naming the file and the way out', () => {
    const dataDir = tempDataDir();
    internalToken({}, { dataDir });
    const file = join(dataDir, INTERNAL_TOKEN_FILE_NAME);
    writeFileSync(file, 'short\n');
    expect(() => internalToken({}, { dataDir })).toThrow(ConfigInvalidError);
    expect(() => internalToken({}, { dataDir })).toThrow(`${file} does not hold an internal token`);
  });
});
