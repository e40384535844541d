import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Keyring } from '../lib/crypto/keyring.ts';
import { ConfigInvalidError } from '../lib/errors.ts';

/** Where a generated data key is kept, inside the data directory beside the embedded database. */
export const DATA_KEYS_FILE_NAME = 'data-encryption-keys';
/** The id of a generated data key (a later rotation puts its own id in front). */
const GENERATED_DATA_KEY_ID = 'local1';
/** Where a database on DATABASE_URL may run with a generated key kept on this machine. */
const GENERATED_KEY_ENVIRONMENTS = new Set(['test', 'development']);

/**
 * The data-encryption keyring. DATA_ENCRYPTION_KEYS when set. Otherwise a key generated once and
 * kept in the data directory (mode 0600), as the demo API key is — but only for the embedded
 * database, or a DATABASE_URL under NODE_ENV test or development (with a warning). A gateway on
 * any other database refuses to start without configured keys: a key generated on one machine
 * would seal answers and secrets that the rest of the fleet, or this machine after a rebuild,
 * could never open, and replays would fail for the whole window.
 */
export function dataKeyring(
  config: {
    dataEncryptionKeys?: Keyring | undefined;
    databaseUrl?: string | undefined;
    nodeEnv?: string | undefined;
  },
  local: { dataDir: string; warn: (line: string) => void },
): { keyring: Keyring; source: string } {
  if (config.dataEncryptionKeys !== undefined) {
    return { keyring: config.dataEncryptionKeys, source: 'DATA_ENCRYPTION_KEYS' };
  }
  const file = resolve(local.dataDir, DATA_KEYS_FILE_NAME);
  if (config.databaseUrl !== undefined) {
    if (!GENERATED_KEY_ENVIRONMENTS.has(config.nodeEnv ?? '')) {
      throw new ConfigInvalidError(
        'DATA_ENCRYPTION_KEYS is not set: with DATABASE_URL the gateway needs its data keys ' +
          '(id:base64key,…; e.g. k1:$(openssl rand -base64 32)); only NODE_ENV=test or development may run without',
      );
    }
    local.warn(
      `WARNING: DATA_ENCRYPTION_KEYS is not set; NODE_ENV=${config.nodeEnv} on DATABASE_URL uses the key in ${file}. ` +
        'Answers and webhook secrets stored now open only with that key.',
    );
  }
  if (existsSync(file)) {
    try {
      return { keyring: Keyring.parse(readFileSync(file, 'utf8').trim(), file), source: file };
    } catch (error) {
      throw new ConfigInvalidError(error instanceof Error ? error.message : String(error));
    }
  }
  mkdirSync(local.dataDir, { recursive: true });
  const { keyring, spec } = Keyring.generate(GENERATED_DATA_KEY_ID);
  // 'wx': of two processes starting at once, one writes and the other fails here and is
  // restarted, instead of each sealing under a key of its own.
  writeFileSync(file, `${spec}\n`, { mode: 0o600, flag: 'wx' });
  return { keyring, source: `${file} (generated at this start)` };
}
