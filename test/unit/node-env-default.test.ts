import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * `npm start` runs graphql-js in production mode unless the operator set NODE_ENV
 * (app/node-env-default.ts, ADR 0064). graphql-js decides once, when it is loaded, so the
 * default must be set before: main.ts imports it first.
 */
const ROOT = join(import.meta.dirname, '..', '..');

/**
 * Loads the default, then graphql-js, in a fresh process with `env`, and reports graphql-js's
 * mode: outside production its instanceof checks throw for an object that only looks like one
 * of its types; in production they answer false.
 */
function graphqlModeAfterDefault(env: Record<string, string | undefined>): string {
  const script = `
    await import(${JSON.stringify(join(ROOT, 'app', 'node-env-default.ts'))});
    const { isObjectType } = await import('graphql');
    const lookalike = { [Symbol.toStringTag]: 'GraphQLObjectType' };
    let mode;
    try { mode = isObjectType(lookalike) ? 'accepted' : 'production'; } catch { mode = 'checking'; }
    console.log(JSON.stringify({ mode, nodeEnv: process.env.NODE_ENV ?? null }));`;
  const { NODE_ENV: _, ...rest } = process.env;
  const run = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', script],
    { cwd: ROOT, env: { ...rest, ...env }, encoding: 'utf8', timeout: 30_000 },
  );
  expect(run.status, run.stderr).toBe(0);
  return run.stdout.trim();
}

describe('NODE_ENV under npm start', () => {
  it('is production when unset, so graphql-js skips its per-field checks', () => {
    expect(JSON.parse(graphqlModeAfterDefault({}))).toEqual({
      mode: 'production',
      nodeEnv: 'production',
    });
  });

  it("is the operator's when set", () => {
    expect(JSON.parse(graphqlModeAfterDefault({ NODE_ENV: 'development' }))).toEqual({
      mode: 'checking',
      nodeEnv: 'development',
    });
  });

  it('is set by the first import of main.ts, before anything loads graphql-js', () => {
    const imports = readFileSync(join(ROOT, 'app', 'main.ts'), 'utf8').match(/^import .*$/gm);
    expect(imports?.[0]).toBe("import './node-env-default.ts';");
  });
});
