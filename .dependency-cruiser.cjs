/**
 * The house's boundaries, checked by `npm run lint`: dependencies point one way (app → gateway →
 * services → lib), a service knows another only by its contract.ts, lib/ knows no service,
 * the gateway holds no SQL, the client SDK (packages/client) and the server never import each
 * other, and nothing imports in a circle.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'A cycle makes load order matter and hides which module owns what. Type-only imports count too: erased at build, they still make a reader walk the circle to learn what a module needs.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'lib-knows-no-service',
      severity: 'error',
      comment:
        'lib/ is the library every service shares (the idempotency engine, the database, the outbox): it may not depend on a service, the gateway or the app.',
      from: { path: '^lib/' },
      to: { path: '^(services/|gateway/|app/|dev/|migrations/|ops/)' },
    },
    {
      name: 'services-import-only-contracts',
      severity: 'error',
      comment:
        'A service knows another only by its contract.ts (types and pure helpers): never its router, its flows or its index, so it can run in a process of its own.',
      from: { path: '^services/([^/]+)/', pathNot: '^services/ops/' },
      to: {
        path: '^services/[^/]+/',
        pathNot: ['^services/$1/', '^services/[^/]+/contract\\.ts$'],
      },
    },
    {
      name: 'services-declare-their-own-deps',
      severity: 'error',
      comment:
        'A service declares what it needs in its own *.deps.ts and builds its procedures on it (*.trpc.ts); the shared context composes those declarations, never the other way.',
      from: { path: '^services/[^/]+/' },
      to: { path: '^services/(context|router)\\.ts$' },
    },
    {
      name: 'ops-uses-service-index',
      severity: 'error',
      comment:
        "The operators' service drives the others' functions (resolve, redrive, reseal), through their index.ts, never their internals.",
      from: { path: '^services/ops/' },
      to: {
        path: '^services/(?!ops/)[^/]+/',
        pathNot: ['^services/[^/]+/(index|contract)\\.ts$'],
      },
    },
    {
      name: 'composition-uses-service-index',
      severity: 'error',
      comment:
        'The services composition (services/*.ts) sees each service through its index.ts, or its contract.ts where types are all it needs.',
      from: { path: '^services/[^/]+\\.ts$' },
      to: {
        path: '^services/[^/]+/',
        pathNot: '^services/[^/]+/(index|contract)\\.ts$',
      },
    },
    {
      name: 'services-know-no-gateway',
      severity: 'error',
      comment: 'Services are called by the gateway, never the other way round.',
      from: { path: '^services/' },
      to: { path: '^(gateway|app|dev)/' },
    },
    {
      name: 'gateway-holds-no-sql',
      severity: 'error',
      comment: 'The gateway speaks to services; SQL lives beside the module that owns the table.',
      from: { path: '^gateway/' },
      to: { path: '\\.sql\\.ts$' },
    },
    {
      name: 'gateway-uses-service-index',
      severity: 'error',
      comment:
        'The gateway and the app see a service through its index.ts, or its contract.ts where types are all they need (or the router and lib/).',
      from: { path: '^(gateway|app)/' },
      to: {
        path: '^services/[^/]+/',
        pathNot: '^services/[^/]+/(index|contract)\\.ts$',
      },
    },
    {
      name: 'gateway-holds-no-engine-or-schema',
      severity: 'error',
      comment:
        'The gateway reaches idempotency only through the services, and the schema only through them too: the engine and the migrations are theirs.',
      from: { path: '^gateway/' },
      to: { path: '^(lib/idempotency/|migrations/)' },
    },
    {
      name: 'gateway-knows-no-app',
      severity: 'error',
      comment: 'The app assembles the gateway; the gateway never reaches back into the app.',
      from: { path: '^gateway/' },
      to: { path: '^(app|dev)/' },
    },
    {
      name: 'client-stands-alone',
      severity: 'error',
      comment:
        'The SDK is published on its own: it may import graphql and the platform, nothing of the gateway.',
      from: { path: '^packages/client/' },
      to: {
        path: '^(app|gateway|services|lib|dev|ops|sandbox-psp|migrations|scripts|test|examples)/',
      },
    },
    {
      name: 'server-knows-no-client',
      severity: 'error',
      comment: 'The gateway serves the contract; it never leans on the SDK that calls it.',
      from: { path: '^(app|gateway|services|lib|dev|ops|sandbox-psp|migrations)/' },
      to: { path: '^packages/' },
    },
    {
      name: 'explorer-browser-code-stays-in-the-browser',
      severity: 'error',
      comment:
        'gateway/explorer/browser is bundled for the browser (scripts/explorer/): server modules or Node built-ins there would fail the bundle, or ship server code to every visitor.',
      from: { path: '^gateway/explorer/browser/' },
      to: {
        path: '^(app|dev|services|lib|migrations|sandbox-psp|ops|gateway/(?!explorer/browser/))',
      },
    },
    {
      name: 'explorer-browser-uses-no-node-built-ins',
      severity: 'error',
      comment: 'The browser has no node: modules; esbuild would fail or ship a shim.',
      from: { path: '^gateway/explorer/browser/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'server-never-imports-browser-code',
      severity: 'error',
      comment:
        'The browser code needs the DOM and React, which the server neither has nor type-checks against (tsconfig.json excludes it).',
      from: { pathNot: '^gateway/explorer/browser/' },
      to: { path: '^gateway/explorer/browser/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|\\.build-|test/|scripts/|grafana/|packages/[^/]+/dist)' },
    tsPreCompilationDeps: 'specify',
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
