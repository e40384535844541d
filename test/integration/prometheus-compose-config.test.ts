import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';

// grafana/prometheus.yml is what grafana/compose.yaml gives Prometheus, and no test runs that
// Prometheus: promtool (Debian's prometheus package, grafana/install-promtool.sh) checks the
// file as the server would load it, and the alert rules through its rule_files.

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);
/** promtool parses two small files in well under a second. */
const PROMTOOL_TIMEOUT_MS = 20_000;

async function ruleCount(): Promise<number> {
  const rules = z
    .object({ groups: z.array(z.object({ rules: z.array(z.unknown()) })) })
    .parse(parse(await readFile(`${REPO}grafana/alerts/payments.rules.yml`, 'utf8')));
  return rules.groups.reduce((count, group) => count + group.rules.length, 0);
}

describe('grafana/prometheus.yml', () => {
  it('passes promtool check config, with every alert rule loaded', async () => {
    const result = await run('promtool', ['check', 'config', 'grafana/prometheus.yml'], {
      cwd: REPO,
      timeout: PROMTOOL_TIMEOUT_MS,
    }).catch((error: unknown) => {
      // execFile's error carries promtool's output; without it promtool did not start.
      const output = z.object({ stderr: z.string() }).safeParse(error);
      throw new Error(
        output.success && output.data.stderr !== ''
          ? `promtool check config: ${output.data.stderr}`
          : 'promtool did not run: install it with bash grafana/install-promtool.sh',
        { cause: error },
      );
    });
    expect(result.stdout).toContain(`SUCCESS: ${await ruleCount()} rules found`);
  });
});
