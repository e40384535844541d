import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's chromium package; `npm test`'s pretest installs it (scripts/install-chromium.sh). */
export const CHROMIUM_PATH = '/usr/bin/chromium';
/** Chromium starts in a second or two; a loaded machine with a cold disk takes longer. */
const LAUNCH_TIMEOUT_MS = 30_000;

export class ChromiumMissingError extends Error {
  override readonly name = 'ChromiumMissingError';
}

/**
 * Headless Chromium, driven by playwright-core (which ships no browser of its own). Missing, the
 * test fails naming the fix instead of skipping: a skipped browser test is an explorer nobody
 * checked.
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new ChromiumMissingError(
      `Chromium is not installed at ${CHROMIUM_PATH}. npm test's pretest installs it with ` +
        '`bash scripts/install-chromium.sh` (apt-get install chromium, as root or with ' +
        'passwordless sudo); see its output, or run it yourself.',
    );
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, timeout: LAUNCH_TIMEOUT_MS });
}
