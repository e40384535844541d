import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigInvalidError } from '../lib/errors.ts';
import type { StartupSecret } from './startup-banner.ts';

/** Where a generated internal token is kept, beside the demo API key and the data keys. */
export const INTERNAL_TOKEN_FILE_NAME = 'internal-token';
/** 24 random bytes: 192 bits, beyond any search, and 32 characters of base64url. */
const GENERATED_TOKEN_BYTES = 24;
/** As the configuration asks of INTERNAL_TOKEN: a file cut short must not become a weak token. */
const MIN_TOKEN_CHARS = 16;

/**
 * The bearer token of /trpc. INTERNAL_TOKEN when set, always. Otherwise, with the embedded
 * database, one generated at the first start and kept in the data directory (mode 0600) as the
 * demo API key is, so a tRPC client or `npm run ops` set up once keeps working across restarts.
 * With DATABASE_URL, a new one at every start, as before: a file on one machine is not a token
 * the deployment's other processes share, and a deployment configures its own.
 */
export function internalToken(
  config: { internalToken?: string | undefined; databaseUrl?: string | undefined },
  local: { dataDir: string },
): StartupSecret {
  if (config.internalToken !== undefined)
    return { value: config.internalToken, generatedNow: false };
  const fresh = randomBytes(GENERATED_TOKEN_BYTES).toString('base64url');
  if (config.databaseUrl !== undefined) return { value: fresh, generatedNow: true };
  const file = resolve(local.dataDir, INTERNAL_TOKEN_FILE_NAME);
  mkdirSync(local.dataDir, { recursive: true });
  try {
    // 'wx': of two starts at once, one writes and the other reads what it wrote.
    writeFileSync(file, `${fresh}\n`, { mode: 0o600, flag: 'wx' });
    return { value: fresh, generatedNow: true, keptIn: file };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const kept = readFileSync(file, 'utf8').trim();
  if (kept.length < MIN_TOKEN_CHARS || /\s/.test(kept)) {
    throw new ConfigInvalidError(
      `${file} does not hold an internal token (one line of ${MIN_TOKEN_CHARS} characters or more): ` +
        'delete it to have one generated, or set INTERNAL_TOKEN',
    );
  }
  return { value: kept, generatedNow: false, keptIn: file };
}
