/**
 * The house's boundaries, checked by `npm run lint`: dependencies point one way (app → gateway →
 * services → kernel), a service is entered through its index.ts, the kernel knows no service,
 * the gateway holds no SQL, and nothing imports in a circle.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'A cycle makes load order matter and hides which module owns what. Type-only imports are erased at build and cannot make one.',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'kernel-knows-no-service',
      severity: 'error',
      comment: 'The kernel is shared glue: it may not depend on a service, the gateway or the app.',
      from: { path: '^services/kernel/' },
      to: { path: '^(services/(?!kernel/)|src/|gateway/|app/)' },
    },
    {
      name: 'no-deep-import-across-services',
      severity: 'error',
      comment: 'Another service is used through its index.ts, never through its internals.',
      from: { path: '^services/([^/]+)/', pathNot: '^services/kernel/' },
      to: {
        path: '^services/[^/]+/',
        pathNot: ['^services/$1/', '^services/kernel/', '^services/[^/]+/index\\.ts$'],
      },
    },
    {
      name: 'composition-uses-service-index',
      severity: 'error',
      comment: 'The services composition (services/*.ts) sees each service through its index.ts.',
      from: { path: '^services/[^/]+\\.ts$' },
      to: { path: '^services/(?!kernel/)[^/]+/', pathNot: '^services/[^/]+/index\\.ts$' },
    },
    {
      name: 'services-know-no-gateway',
      severity: 'error',
      comment: 'Services are called by the gateway, never the other way round.',
      from: { path: '^services/' },
      to: { path: '^(src|gateway|app)/' },
    },
    {
      name: 'gateway-holds-no-sql',
      severity: 'error',
      comment: 'The gateway speaks to services; SQL lives beside the module that owns the table.',
      from: { path: '^(src|gateway)/' },
      to: { path: '\\.sql\\.ts$' },
    },
    {
      name: 'gateway-uses-service-index',
      severity: 'error',
      comment: 'The gateway sees a service through its index.ts (or the router and kernel).',
      from: { path: '^(src|gateway)/' },
      to: { path: '^services/(?!kernel/)[^/]+/', pathNot: '^services/[^/]+/index\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|\\.build-|test/|scripts/|grafana/)' },
    tsPreCompilationDeps: 'specify',
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
