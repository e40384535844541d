/**
 * A real Prometheus server (Debian's `prometheus` package, which grafana/install-promtool.sh
 * installs; `npm test`'s pretest and `.ci/run` run it) as a child process of the test, in a
 * temporary directory, on 127.0.0.1 only. Nothing is mocked: it scrapes the gateway, evaluates the rule files and
 * answers PromQL over its HTTP API.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { constants } from 'node:fs';
import { access, copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { findFreePort } from '../../dev/embedded-postgres/database-server.ts';

const DEBIAN_BINARY = '/usr/bin/prometheus';
/** Prometheus opens its TSDB and rule files in well under a second on an empty directory. */
const READY_TIMEOUT_MS = 20_000;
/** SIGTERM flushes the head block; past this, SIGKILL (the data directory is thrown away). */
const STOP_TIMEOUT_MS = 5_000;
/** Enough of Prometheus' log to explain a failed start or a rule that does not load. */
const LOG_LINES_KEPT = 40;
const API_TIMEOUT_MS = 5_000;

export interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

/** An instant query's answer: a vector, or the error Prometheus gave for the expression. */
export type QueryAnswer = { ok: true; samples: Sample[] } | { ok: false; error: string };

export interface ActiveAlert {
  labels: Record<string, string>;
  state: 'pending' | 'firing' | 'inactive';
}

export interface RuleState {
  name: string;
  type: 'alerting' | 'recording';
  health: 'ok' | 'err' | 'unknown';
  lastError?: string;
}

export interface Prometheus {
  url: string;
  query(expr: string): Promise<QueryAnswer>;
  /** Alerts that are pending or firing (GET /api/v1/alerts). */
  alerts(): Promise<ActiveAlert[]>;
  /** Every loaded rule with the health of its last evaluation (GET /api/v1/rules). */
  rules(): Promise<RuleState[]>;
  /** Values of a label across the series a selector matches, as Grafana's label_values(). */
  labelValues(label: string, match: string): Promise<string[]>;
  /** The last lines Prometheus logged, for failure messages. */
  log(): string;
  stop(): Promise<void>;
}

/**
 * Finds the server binary: on PATH, else where Debian puts it. Fails (never skips) when it is
 * absent, since a skipped test would let a dashboard that shows nothing pass CI.
 */
export async function findPrometheus(): Promise<string> {
  const candidates = [
    ...(process.env['PATH'] ?? '')
      .split(delimiter)
      .filter((dir) => dir !== '')
      .map((dir) => join(dir, 'prometheus')),
    DEBIAN_BINARY,
  ];
  for (const candidate of candidates) {
    if (
      await access(candidate, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return candidate;
  }
  throw new Error(
    "prometheus (the server) is not on PATH nor at /usr/bin/prometheus. Install Debian's " +
      '`prometheus` package with `bash grafana/install-promtool.sh` (`npm test` runs it as its ' +
      'pretest, .ci/run before the tests; it needs root or passwordless sudo, and apt-get).',
  );
}

/**
 * Starts Prometheus scraping `target` (host:port of a /metrics endpoint) every second and
 * evaluating `ruleFiles` every second. The rule files are copied into the temporary directory,
 * so the server reads exactly what the caller passed, and nothing of the repository is written.
 */
export async function startPrometheus(opts: {
  target: string;
  ruleFiles: string[];
}): Promise<Prometheus> {
  const binary = await findPrometheus();
  const dir = await mkdtemp(join(tmpdir(), 'pgw-prometheus-'));
  const lines: string[] = [];
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const stop = async (): Promise<void> => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killed = await Promise.race([
        exited.then(() => false),
        sleep(STOP_TIMEOUT_MS).then(() => true),
      ]);
      if (killed) {
        child.kill('SIGKILL');
        await exited;
      }
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const rulesDir = join(dir, 'rules');
    await mkdir(rulesDir);
    const rules: string[] = [];
    for (const file of opts.ruleFiles) {
      const copy = join(rulesDir, basename(file));
      await copyFile(file, copy);
      rules.push(copy);
    }
    const config = {
      global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
      rule_files: rules,
      scrape_configs: [
        {
          job_name: 'payments-gateway',
          metrics_path: '/metrics',
          static_configs: [{ targets: [opts.target] }],
        },
      ],
    };
    const configFile = join(dir, 'prometheus.yml');
    await writeFile(configFile, JSON.stringify(config, null, 2)); // JSON is YAML
    // A free port can be taken between the probe and Prometheus' bind: it then exits with
    // "address already in use", which the readiness wait reports with the log.
    const port = await findFreePort();
    const url = `http://127.0.0.1:${port}`;
    const started = spawn(
      binary,
      [
        `--config.file=${configFile}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = started;
    exited = new Promise((resolve) => started.once('exit', () => resolve()));
    const keep = (chunk: Buffer) => {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      lines.splice(0, Math.max(0, lines.length - LOG_LINES_KEPT));
    };
    started.stdout?.on('data', keep);
    started.stderr?.on('data', keep);
    // An 'error' event (spawn failure) unheard would crash the worker; the readiness wait
    // sees the process gone and reports it.
    started.once('error', (error) => lines.push(`spawn failed: ${error.message}`));

    const log = () => lines.join('\n');
    await waitUntilReady({ url, child: started, log });
    return {
      url,
      log,
      stop,
      query: async (expr) => {
        const body = await api<
          | { resultType: 'vector'; result: Sample[] }
          | { resultType: 'scalar'; result: [number, string] }
        >(url, '/api/v1/query', { query: expr });
        if (!body.ok) return body;
        const { data } = body;
        // A scalar expression (`time()`, `1 + 1`) answers one unlabelled value.
        return {
          ok: true,
          samples:
            data.resultType === 'vector' ? data.result : [{ metric: {}, value: data.result }],
        };
      },
      alerts: async () => {
        const body = await api<{ alerts: ActiveAlert[] }>(url, '/api/v1/alerts', {});
        if (!body.ok) throw new Error(`GET /api/v1/alerts: ${body.error}`);
        return body.data.alerts;
      },
      rules: async () => {
        const body = await api<{ groups: Array<{ rules: RuleState[] }> }>(url, '/api/v1/rules', {});
        if (!body.ok) throw new Error(`GET /api/v1/rules: ${body.error}`);
        return body.data.groups.flatMap((group) => group.rules);
      },
      labelValues: async (label, match) => {
        const body = await api<string[]>(url, `/api/v1/label/${label}/values`, {
          'match[]': match,
        });
        if (!body.ok) throw new Error(`GET /api/v1/label/${label}/values: ${body.error}`);
        return body.data;
      },
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function waitUntilReady(opts: {
  url: string;
  child: ChildProcess;
  log: () => string;
}): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (opts.child.exitCode !== null || opts.child.signalCode !== null) {
      throw new Error(`prometheus exited before it was ready:\n${opts.log()}`);
    }
    const ready = await fetch(`${opts.url}/-/ready`, { signal: AbortSignal.timeout(1_000) }).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) return;
    if (Date.now() > deadline) {
      throw new Error(`prometheus not ready after ${READY_TIMEOUT_MS} ms:\n${opts.log()}`);
    }
    await sleep(100);
  }
}

type ApiAnswer<T> = { ok: true; data: T } | { ok: false; error: string };

/** GET on Prometheus' HTTP API; a PromQL error (400/422) is an answer, not an exception. */
async function api<T>(
  url: string,
  path: string,
  params: Record<string, string>,
): Promise<ApiAnswer<T>> {
  const response = await fetch(`${url}${path}?${new URLSearchParams(params).toString()}`, {
    signal: AbortSignal.timeout(API_TIMEOUT_MS),
  });
  const body = (await response.json()) as
    { status: 'success'; data: T } | { status: 'error'; errorType: string; error: string };
  return body.status === 'success'
    ? { ok: true, data: body.data }
    : { ok: false, error: `${body.errorType}: ${body.error}` };
}
