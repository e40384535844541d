/**
 * The SDK's build (`packages/client`, @payments-gateway/client), run by `npm run build` after
 * the gateway's: tsc with the package's own tsconfig, emitted beside `dist/` and renamed into
 * place, so code importing the package meanwhile finds the old build or the new one, never
 * half of either. A type error fails the build, as it does for the gateway.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { BuildFailedError } from './build-failed-error.ts';

const PACKAGE = resolve(import.meta.dirname, '..', 'packages', 'client');
export const CLIENT_OUT_DIR = join(PACKAGE, 'dist');

/** Emits the SDK's JavaScript and declarations into `outDir` (by default its dist/). */
export function buildClientPackage(outDir: string = CLIENT_OUT_DIR): void {
  const staging = `${outDir}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const compiled = spawnSync(
    process.execPath,
    [tsc, '-p', join(PACKAGE, 'tsconfig.json'), '--outDir', staging],
    { cwd: PACKAGE, encoding: 'utf8' },
  );
  if (compiled.status !== 0) {
    rmSync(staging, { recursive: true, force: true });
    throw new BuildFailedError(
      `tsc (packages/client) failed (${compiled.status}):\n${compiled.stdout}${compiled.stderr}`,
    );
  }
  const previous = `${outDir}.old-${process.pid}`;
  if (existsSync(outDir)) renameSync(outDir, previous);
  renameSync(staging, outDir);
  rmSync(previous, { recursive: true, force: true });
}
