import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { afterEach, describe, expect, it } from 'vitest';
import {
  buildUnlessUpToDate,
  builtFrom,
  inputsDigest,
  recordInputs,
} from '../../scripts/build-inputs.ts';
import { gatewayInputs } from '../../scripts/build.ts';

const PROJECT = join(import.meta.dirname, '..', '..');
/** tsc reading the whole project's file list: seconds on a loaded machine. */
const TSC_LIST_TIMEOUT_MS = 120_000;
let dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

/** A project of two sources, a test beside one, and what is never an input. */
function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pgw-build-inputs-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'src', 'node_modules'), { recursive: true });
  mkdirSync(join(dir, 'src', 'dist'), { recursive: true });
  writeFileSync(join(dir, 'src', 'a.ts'), 'export const a = 1;\n');
  writeFileSync(join(dir, 'src', 'b.ts'), 'export const b = 2;\n');
  writeFileSync(join(dir, 'src', 'a.test.ts'), 'test\n');
  writeFileSync(join(dir, 'src', 'node_modules', 'x.js'), 'x\n');
  writeFileSync(join(dir, 'src', 'dist', 'a.js'), 'a\n');
  writeFileSync(join(dir, 'package-lock.json'), '{}\n');
  return dir;
}

const ROOTS = ['src', 'package-lock.json', 'not-yet'];

describe('the inputs of a build', () => {
  it('change with any input’s content, its addition or removal, and nothing else', () => {
    const dir = project();
    const digest = () => inputsDigest(dir, ROOTS);
    const first = digest();
    expect(digest()).toBe(first);
    // The same bytes with another mtime (a checkout putting a file back): no change.
    utimesSync(join(dir, 'src', 'a.ts'), new Date(0), new Date(0));
    expect(digest()).toBe(first);
    // Not inputs: tests tsc does not compile, dependencies, outputs.
    writeFileSync(join(dir, 'src', 'a.test.ts'), 'changed\n');
    writeFileSync(join(dir, 'src', 'node_modules', 'x.js'), 'changed\n');
    writeFileSync(join(dir, 'src', 'dist', 'a.js'), 'changed\n');
    expect(digest()).toBe(first);
    const seen = new Set([first]);
    const changes = [
      () => writeFileSync(join(dir, 'src', 'a.ts'), 'export const a = 3;\n'),
      () => writeFileSync(join(dir, 'src', 'c.ts'), 'export const c = 4;\n'),
      () => rmSync(join(dir, 'src', 'b.ts')),
      () => writeFileSync(join(dir, 'package-lock.json'), '{"v":2}\n'),
      () => writeFileSync(join(dir, 'not-yet'), 'a root made later\n'),
    ];
    for (const change of changes) {
      change();
      const next = digest();
      expect(seen.has(next)).toBe(false);
      seen.add(next);
    }
  });

  it('a build that fails records nothing, so the next one builds again', () => {
    const dir = project();
    const outDir = join(dir, 'out');
    let builds = 0;
    const target = (fail: boolean) => ({
      outDir,
      digest: inputsDigest(dir, ROOTS),
      build: (digest: string) => {
        builds += 1;
        if (fail) throw new Error('tsc failed');
        mkdirSync(outDir, { recursive: true });
        recordInputs(outDir, digest);
      },
    });
    expect(buildUnlessUpToDate(target(false))).toBe('built');
    expect(buildUnlessUpToDate(target(false))).toBe('up to date');
    expect(builds).toBe(1);
    writeFileSync(join(dir, 'src', 'a.ts'), 'export const a = ;\n');
    expect(() => buildUnlessUpToDate(target(true))).toThrow('tsc failed');
    expect(() => buildUnlessUpToDate(target(true))).toThrow('tsc failed');
    expect(builds).toBe(3);
    // The output removed: its record with it.
    writeFileSync(join(dir, 'src', 'a.ts'), 'export const a = 1;\n');
    expect(buildUnlessUpToDate(target(false))).toBe('up to date');
    rmSync(outDir, { recursive: true });
    expect(builtFrom(outDir)).toBeUndefined();
    expect(buildUnlessUpToDate(target(false))).toBe('built');
  });

  it('tsconfig.build.json’s include is read as tsc reads it', () => {
    const file = join(PROJECT, 'tsconfig.build.json');
    const read = ts.readConfigFile(file, (path) => readFileSync(path, 'utf8'));
    const include = (read.config as { include: string[] }).include;
    expect(gatewayInputs().slice(0, include.length)).toEqual(include);
  });

  it(
    'cover every project file tsc reads for the build, imports outside its include too',
    () => {
      const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
      const listed = spawnSync(
        process.execPath,
        [tsc, '-p', join(PROJECT, 'tsconfig.build.json'), '--listFilesOnly'],
        { cwd: PROJECT, encoding: 'utf8', timeout: TSC_LIST_TIMEOUT_MS },
      );
      expect(listed.status, listed.stderr).toBe(0);
      const ours = listed.stdout
        .split('\n')
        .filter((line) => line !== '' && !line.includes('/node_modules/'))
        .map((file) => relative(PROJECT, file));
      expect(ours.length).toBeGreaterThan(100);
      const roots = gatewayInputs();
      const outside = ours.filter(
        (file) => !roots.some((root) => file === root || file.startsWith(`${root}/`)),
      );
      expect(outside).toEqual([]);
    },
    TSC_LIST_TIMEOUT_MS,
  );
});
