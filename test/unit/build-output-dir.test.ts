import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BuildFailedError, DEFAULT_OUT_DIR, buildJavaScript } from '../../scripts/build.ts';

/**
 * The build replaces its output directory whole, so a mistyped `npm run build -- <dir>` must not
 * reach rmSync/rename. The paths below would be harmless even if the guard were missing: a build
 * would land in them and the test would fail on the missing error.
 */
describe('the build output directory', () => {
  it('is refused outside the project and below dist/, before anything is written', () => {
    for (const outDir of [join(tmpdir(), `pgw-build-${process.pid}`), join(DEFAULT_OUT_DIR, 'x')]) {
      expect(() => buildJavaScript(outDir)).toThrow(BuildFailedError);
      expect(existsSync(outDir)).toBe(false);
      expect(existsSync(`${outDir}.tmp-${process.pid}`)).toBe(false);
    }
  });
});
