import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { configVariables } from '../../app/config-schema.ts';
import { RUNBOOKS_URL } from '../../grafana/builders/runbooks.ts';

// Docker is not run by any test (this machine has no daemon): grafana/compose.yaml is checked
// as YAML. Each check stands for a way `docker compose up` would come up wrong without saying
// so: a mount of a path that is not there (Docker creates an empty directory), Grafana with no
// data source or no dashboards, Prometheus with no rules or scraping nothing, links to a
// runbooks page that nothing serves.

const GRAFANA_DIR = fileURLToPath(new URL('../../grafana/', import.meta.url));
const readGrafana = (path: string) => readFile(GRAFANA_DIR + path, 'utf8');

const serviceSchema = z.object({
  image: z.string(),
  volumes: z.array(z.string()).default([]),
  ports: z.array(z.string()).default([]),
  environment: z.record(z.string(), z.string()).default({}),
  extra_hosts: z.array(z.string()).default([]),
});
type Service = z.infer<typeof serviceSchema>;
const composeSchema = z.object({ services: z.record(z.string(), serviceSchema) });

async function compose() {
  return composeSchema.parse(parse(await readGrafana('compose.yaml'))).services;
}

function service(services: Record<string, Service>, name: string): Service {
  const found = services[name];
  if (found === undefined) throw new Error(`compose.yaml has no service ${name}`);
  return found;
}

interface Mount {
  /** As written: relative to grafana/, so the file works from any checkout. */
  written: string;
  /** Normalised: `./dashboards` is `dashboards`. */
  host: string;
  container: string;
  mode: string | undefined;
}

/** Short-syntax bind mounts (`./host:/container:ro`), host paths relative to grafana/. */
function mounts(svc: Service): Mount[] {
  return svc.volumes.map((volume) => {
    const [host = '', container = '', mode] = volume.split(':');
    return { written: host, host: posix.normalize(host), container, mode };
  });
}

/** The repository path (under grafana/) that a path inside the container comes from. */
function hostPathOf(svc: Service, containerPath: string): string | undefined {
  for (const mount of mounts(svc)) {
    if (containerPath === mount.container) return mount.host;
    if (containerPath.startsWith(`${mount.container}/`)) {
      return posix.join(mount.host, containerPath.slice(mount.container.length + 1));
    }
  }
  return undefined;
}

const prometheusConfig = z.object({
  rule_files: z.array(z.string()),
  scrape_configs: z.array(
    z.object({
      job_name: z.string(),
      static_configs: z.array(z.object({ targets: z.array(z.string()) })),
    }),
  ),
});

/** The `${VAR}` references of a provisioning file, which Grafana reads from its environment. */
const variablesOf = (text: string) =>
  [...text.replace(/^\s*#.*$/gm, '').matchAll(/\$\{?(\w+)\}?/g)].map((match) => match[1]);

describe('grafana/compose.yaml', () => {
  it('pins every image to a version', async () => {
    for (const [name, svc] of Object.entries(await compose())) {
      const tag = /^[\w./-]+:([\w.-]+)$/.exec(svc.image)?.[1];
      expect(tag, `${name}: ${svc.image}`).toMatch(/^v?\d+\.\d+\.\d+(-[\w.]+)?$/);
    }
  });

  it('mounts only paths that exist in the repository, read-only', async () => {
    for (const [name, svc] of Object.entries(await compose())) {
      for (const mount of mounts(svc)) {
        expect(mount.written, `${name}: ${mount.written}`).toMatch(/^\.{1,2}\//);
        expect(existsSync(GRAFANA_DIR + mount.host), `${name}: ${mount.host} is missing`).toBe(
          true,
        );
        expect(mount.mode, `${name}: ${mount.host}`).toBe('ro');
      }
    }
  });

  it('publishes ports on 127.0.0.1 only', async () => {
    for (const [name, svc] of Object.entries(await compose())) {
      for (const port of svc.ports) expect(port, name).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
    }
  });

  it('gives Grafana the provisioning, the dashboards and every variable they read', async () => {
    const grafana = service(await compose(), 'grafana');
    expect(hostPathOf(grafana, '/etc/grafana/provisioning')).toBe('provisioning');
    const provider = z
      .object({ providers: z.array(z.object({ options: z.object({ path: z.string() }) })) })
      .parse(parse(await readGrafana('provisioning/dashboards/payments.yaml')));
    for (const { options } of provider.providers) {
      expect(hostPathOf(grafana, options.path), options.path).toBe('dashboards');
    }
    const home = grafana.environment['GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH'] ?? '';
    expect(existsSync(GRAFANA_DIR + (hostPathOf(grafana, home) ?? '-')), home).toBe(true);
    const datasources = await readGrafana('provisioning/datasources/prometheus.yaml');
    for (const name of variablesOf(datasources)) {
      expect(grafana.environment, `${name} is unset`).toHaveProperty(name ?? '');
    }
  });

  it('points Grafana at the Prometheus service', async () => {
    const services = await compose();
    const url = new URL(service(services, 'grafana').environment['PROMETHEUS_URL'] ?? '');
    const prometheus = service(services, url.hostname);
    expect(prometheus.image).toMatch(/^prom\/prometheus:/);
    expect(url.port).toBe('9090'); // where the image's Prometheus listens
  });

  it('takes the admin password from the environment, with a default for local use', async () => {
    const grafana = service(await compose(), 'grafana');
    expect(grafana.environment['GF_SECURITY_ADMIN_PASSWORD']).toMatch(/^\$\{\w+:-[^}]+\}$/);
  });

  it('gives Prometheus grafana/prometheus.yml and the rule files it names', async () => {
    const prometheus = service(await compose(), 'prometheus');
    const configPath = '/etc/prometheus/prometheus.yml';
    expect(hostPathOf(prometheus, configPath)).toBe('prometheus.yml');
    const config = prometheusConfig.parse(parse(await readGrafana('prometheus.yml')));
    // Prometheus reads rule_files relative to its config file's directory.
    const rules = config.rule_files.map((file) =>
      hostPathOf(prometheus, posix.resolve(posix.dirname(configPath), file)),
    );
    expect(rules).toEqual(['alerts/payments.rules.yml']);
  });

  it('scrapes the gateway on the host, at its default PORT', async () => {
    const prometheus = service(await compose(), 'prometheus');
    const config = prometheusConfig.parse(parse(await readGrafana('prometheus.yml')));
    const targets = config.scrape_configs.flatMap((job) =>
      job.static_configs.flatMap((s) => s.targets),
    );
    const port = configVariables().find((variable) => variable.env === 'PORT')?.shown;
    expect(targets).toContain(`host.docker.internal:${port}`);
    // Docker Desktop knows host.docker.internal; Docker on Linux only with this mapping.
    expect(prometheus.extra_hosts).toContain('host.docker.internal:host-gateway');
  });

  it('serves grafana/runbooks/index.html where RUNBOOKS_URL points', async () => {
    const runbooks = new URL(RUNBOOKS_URL);
    // Pointed elsewhere (a repository's web page), the runbooks service has no use: drop both.
    expect(runbooks.hostname, 'RUNBOOKS_URL is not the runbooks service').toBe('localhost');
    const server = service(await compose(), 'runbooks');
    expect(server.image).toMatch(/^nginx:/);
    // The nginx image serves /usr/share/nginx/html on port 80.
    expect(server.ports).toEqual([`127.0.0.1:${runbooks.port}:80`]);
    expect(hostPathOf(server, `/usr/share/nginx/html${runbooks.pathname}index.html`)).toBe(
      'runbooks/index.html',
    );
    expect(existsSync(`${GRAFANA_DIR}runbooks/index.html`)).toBe(true);
  });
});
