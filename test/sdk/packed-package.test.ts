/**
 * @payments-gateway/client as a merchant gets it: `npm pack` in packages/client (its prepack
 * builds dist/), the tarball installed into an empty project under the system's temporary
 * directory, outside the workspace (no symlink, no hoisted graphql: npm installs graphql as a
 * merchant's npm would, from its cache when `npm ci` has put it there, else from the registry),
 * and then
 * (a) plain node imports it (ESM) and requires it (CommonJS), with its subpaths;
 * (b) the workspace's tsc type-checks a merchant's file against the installed declarations under
 *     moduleResolution node16, nodenext, bundler and node10, each condition's own types;
 * (c) an ESM and a CommonJS script run payments through it against a started gateway.
 * Before the package built on pack, (a) failed with ERR_MODULE_NOT_FOUND …/dist/index.js.
 */
import { execFile } from 'node:child_process';
import { existsSync, lstatSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signWebhook } from '../../services/notifications/webhook-signature.ts';
import { useTestDatabase } from '../support/test-database.ts';
import { startTestStack, TENANT_A, type TestStack } from '../support/test-stack.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');
const PACKAGE = join(ROOT, 'packages', 'client');
const TSC = join(ROOT, 'node_modules', '.bin', 'tsc');
const run = promisify(execFile);

/**
 * The environment of a merchant's shell: nothing of this test run's own (npm_* of `npm test`,
 * NODE_OPTIONS that may load tsx), so npm and node behave as they would for them.
 */
function merchantEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !name.toLowerCase().startsWith('npm_') && name !== 'NODE_OPTIONS',
    ),
  );
  return { ...env, ...extra };
}

async function sh(
  file: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<string> {
  try {
    const { stdout } = await run(file, args, {
      cwd: options.cwd,
      env: merchantEnv(options.env),
      maxBuffer: 16 * 1024 * 1024,
    });
    return stdout;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${file} ${args.join(' ')} failed:\n${stdout ?? ''}\n${stderr ?? ''}`, {
      cause: error,
    });
  }
}

const database = useTestDatabase('sdk_packed_package');
let scratch: string;
let app: string;
let packed: { filename: string; files: Array<{ path: string }> };
let stack: TestStack;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'pgw-packed-sdk-'));
  app = join(scratch, 'merchant-app');
  await mkdir(app);
  const [stackStarted] = await Promise.all([
    startTestStack({ databaseUrl: database.url }),
    (async () => {
      // --json: the tarball's name and contents, after prepack has run.
      const report = await sh('npm', ['pack', '--json', '--pack-destination', scratch], {
        cwd: PACKAGE,
      });
      const parsed = JSON.parse(report.slice(report.indexOf('['))) as Array<typeof packed>;
      packed = parsed[0]!;
      await writeFile(
        join(app, 'package.json'),
        JSON.stringify({ name: 'merchant-app', version: '1.0.0', private: true }),
      );
      await sh(
        'npm',
        ['install', '--no-audit', '--no-fund', '--prefer-offline', join(scratch, packed.filename)],
        {
          cwd: app,
        },
      );
    })(),
  ]);
  stack = stackStarted;
}, 300_000);

afterAll(async () => {
  await stack?.stop();
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
});

describe('the packed tarball', () => {
  it('holds both builds, the licence and the README; it is installed as files, with graphql', () => {
    const paths = packed.files.map((file) => file.path);
    for (const path of [
      'package.json',
      'README.md',
      'LICENSE',
      'dist/esm/index.js',
      'dist/esm/index.d.ts',
      'dist/esm/package.json',
      'dist/cjs/index.js',
      'dist/cjs/index.d.ts',
      'dist/cjs/package.json',
      'dist/cjs/file-key-store.js',
      'dist/cjs/webhooks.js',
    ]) {
      expect(paths, path).toContain(path);
    }
    const installed = join(app, 'node_modules', '@payments-gateway', 'client');
    expect(lstatSync(installed).isSymbolicLink()).toBe(false);
    expect(existsSync(join(app, 'node_modules', 'graphql', 'package.json'))).toBe(true);
  });
});

describe('(a) plain node loads the installed package', () => {
  const secret = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
  const timestamp = Math.floor(Date.now() / 1000);
  const body = JSON.stringify({ type: 'payment.succeeded', timestamp: 'now', data: {} });
  const webhook = {
    body,
    secret,
    headers: {
      'webhook-id': 'evt_1',
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signWebhook({ secret, id: 'evt_1', timestamp, body }),
    },
  };

  /** The same checks, written once: `load` is `await import` or `require`. */
  const checks = (load: string) => `
    const sdk = ${load}('@payments-gateway/client');
    const files = ${load}('@payments-gateway/client/file-key-store');
    const hooks = ${load}('@payments-gateway/client/webhooks');
    const hook = JSON.parse(process.env.WEBHOOK);
    const client = sdk.createPaymentsClient({ url: 'http://127.0.0.1:9/graphql', apiKey: 'k',
      maxAttempts: 1, fetch: () => Promise.reject(new TypeError('fetch failed')) });
    const error = await client.balances().catch((e) => e);
    const store = files.createFileKeyStore({ directory: 'keys' });
    await store.set('op', 'key-1');
    const bad = (() => { try { hooks.verifyWebhook('{}', hook.headers, hook.secret); }
      catch (e) { return e; } })();
    console.log(JSON.stringify({
      error: [error instanceof sdk.PaymentsApiError, error.code],
      stored: await store.get('op'),
      event: hooks.verifyWebhook(hook.body, hook.headers, hook.secret).type,
      refused: [bad instanceof hooks.WebhookVerificationError, bad.code],
      document: sdk.CreatePaymentDocument.kind,
    }));`;

  it.each([
    ['ESM', 'esm.mjs', checks('await import')],
    ['CommonJS', 'cjs.cjs', `(async () => {${checks('require')}})();`],
  ])(
    '%s',
    async (_, file, script) => {
      await writeFile(join(app, file), script);
      const stdout = await sh(process.execPath, [file], {
        cwd: app,
        env: { WEBHOOK: JSON.stringify(webhook) },
      });
      expect(JSON.parse(stdout)).toEqual({
        error: [true, 'NETWORK_ERROR'],
        stored: 'key-1',
        event: 'payment.succeeded',
        refused: [true, 'INVALID_SIGNATURE'],
        document: 'Document',
      });
    },
    120_000,
  );
});

describe('(b) a merchant project type-checks against the installed declarations', () => {
  /** A merchant's file: every entry point, a decline, OUTCOME_PENDING, and one misuse. */
  const source = `
import { createPaymentsClient, PaymentsApiError, type Payment } from '@payments-gateway/client';
import { createFileKeyStore } from '@payments-gateway/client/file-key-store';
import { verifyWebhook, type WebhookEvent } from '@payments-gateway/client/webhooks';

const client = createPaymentsClient({
  url: 'http://127.0.0.1:4000/graphql',
  apiKey: 'sk_test',
  keyStore: createFileKeyStore({ directory: '.keys' }),
});

export async function checkout(order: string): Promise<Payment | 'pending'> {
  try {
    const { payment } = await client.createPayment(
      { amount: '10.50', currency: 'EUR', paymentMethod: 'pm_card_visa', reference: order },
      { operationId: order },
    );
    if (payment.status === 'FAILED') console.log(payment.failureCode);
    return payment;
  } catch (error) {
    if (error instanceof PaymentsApiError && error.code === 'OUTCOME_PENDING') return 'pending';
    throw error;
  }
}

export function receive(body: string, headers: Record<string, string>): WebhookEvent {
  return verifyWebhook(body, headers, ['whsec_AAAA', 'whsec_BBBB']);
}

export function receiveStrictly(body: Uint8Array, headers: Headers): string {
  return verifyWebhook(body, headers, { secret: 'whsec_AAAA', toleranceSeconds: 60 }).id;
}

export const endpoints = client.webhookEndpoints().then((list) => list.map((e) => e.status));

// @ts-expect-error: the SDK sets the idempotency key; the input has none
void client.createPayment({ idempotencyKey: 'k', amount: '1', currency: 'EUR', paymentMethod: 'pm_x' });
`;

  const MODES = [
    // The files checked, and the declarations each mode must be checked against.
    {
      moduleResolution: 'node16',
      module: 'node16',
      files: ['merchant.mts', 'merchant.cts'],
      builds: ['dist/esm', 'dist/cjs'],
    },
    {
      moduleResolution: 'nodenext',
      module: 'nodenext',
      files: ['merchant.mts', 'merchant.cts'],
      builds: ['dist/esm', 'dist/cjs'],
    },
    { moduleResolution: 'bundler', module: 'esnext', files: ['merchant.ts'], builds: ['dist/esm'] },
    {
      moduleResolution: 'bundler',
      module: 'preserve',
      files: ['merchant.ts'],
      builds: ['dist/esm'],
    },
    // What a bare `tsc` defaults to (module commonjs): exports are not read; typesVersions is.
    {
      moduleResolution: 'node10',
      module: 'commonjs',
      files: ['merchant.ts'],
      builds: ['dist/cjs'],
    },
  ] as const;

  it.each(MODES)(
    'moduleResolution $moduleResolution, module $module',
    async ({ moduleResolution, module, files, builds }) => {
      for (const file of files) await writeFile(join(app, file), source);
      const config = `tsconfig.${moduleResolution}-${module}.json`;
      await writeFile(
        join(app, config),
        JSON.stringify({
          compilerOptions: {
            moduleResolution,
            module,
            target: 'es2022',
            lib: ['es2022', 'dom'],
            types: [],
            strict: true,
            noEmit: true,
            // The package's declarations are checked too, not trusted.
            skipLibCheck: false,
          },
          files,
        }),
      );
      const listed = await sh(process.execPath, [TSC, '-p', config, '--listFiles'], { cwd: app });
      const sdkFiles = listed
        .split('\n')
        .filter((line) => line.includes('node_modules/@payments-gateway/client/'));
      for (const build of builds) {
        for (const entry of ['index', 'file-key-store', 'webhooks']) {
          expect(sdkFiles, `${build}/${entry}.d.ts`).toContainEqual(
            expect.stringContaining(`/client/${build}/${entry}.d.ts`),
          );
        }
      }
      // From the scratch project's node_modules, never the workspace's sources.
      expect(sdkFiles.every((path) => path.startsWith(app))).toBe(true);
      expect(sdkFiles.some((path) => path.includes('/src/'))).toBe(false);
    },
    120_000,
  );
});

describe('(c) payments through the installed package, against a gateway', () => {
  const script = (load: string, suffix: string) => `
    const { createPaymentsClient, PaymentsApiError } = ${load}('@payments-gateway/client');
    const { createFileKeyStore } = ${load}('@payments-gateway/client/file-key-store');
    const client = createPaymentsClient({ url: process.env.GATEWAY_URL,
      apiKey: process.env.API_KEY, keyStore: createFileKeyStore({ directory: 'keys-${suffix}' }) });
    const paid = await client.createPayment({ amount: '10.50', currency: 'EUR',
      paymentMethod: 'pm_card_visa', reference: 'packed-paid-${suffix}' },
      { operationId: 'order-${suffix}' });
    const declined = await client.createPayment({ amount: '10.50', currency: 'EUR',
      paymentMethod: 'pm_card_declined', reference: 'packed-declined-${suffix}' });
    const read = await client.payment(paid.payment.id);
    const refusal = await client.capturePayment({ paymentId: paid.payment.id }).catch((e) => e);
    console.log(JSON.stringify({
      paid: paid.payment.status,
      declined: [declined.payment.status, declined.payment.failureCode],
      read: read && read.id === paid.payment.id,
      refusal: [refusal instanceof PaymentsApiError, refusal.code, refusal.retryable],
    }));`;

  it.each([
    ['ESM', 'pay.mjs', script('await import', 'esm')],
    ['CommonJS', 'pay.cjs', `(async () => {${script('require', 'cjs')}})();`],
  ])(
    '%s',
    async (_, file, source) => {
      await writeFile(join(app, file), source);
      const stdout = await sh(process.execPath, [file], {
        cwd: app,
        env: { GATEWAY_URL: `${stack.app.url}/graphql`, API_KEY: TENANT_A.apiKey },
      });
      expect(JSON.parse(stdout)).toEqual({
        paid: 'SUCCEEDED',
        declined: ['FAILED', 'CARD_DECLINED'],
        read: true,
        refusal: [true, 'INVALID_PAYMENT_STATE', false],
      });
      const suffix = file.endsWith('.mjs') ? 'esm' : 'cjs';
      const { rows } = await stack.db.query<{ status: string }>(
        `SELECT status FROM payments WHERE reference = $1`,
        [`packed-paid-${suffix}`],
      );
      expect(rows).toEqual([{ status: 'SUCCEEDED' }]);
    },
    120_000,
  );
});
