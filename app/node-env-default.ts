/**
 * `npm start` runs with NODE_ENV=production unless the operator set NODE_ENV. main.ts imports this
 * module first, so it runs before anything loads graphql-js: graphql-js reads NODE_ENV once, when
 * it is loaded, and outside production it inspects every failed `instanceof` of its own types for
 * a second copy of itself. Its executor makes those checks for every field of every request, and
 * they showed as the heaviest function of graphql-js in the gateway's CPU profile of replays
 * (docs/decisions/0064-npm-start-runs-in-production-mode.md).
 *
 * Nothing else changes: the gateway's own settings treat an unset NODE_ENV as production already
 * (only `test` and `development` relax anything), and Apollo's defaults that follow NODE_ENV are
 * all set explicitly (gateway/graphql/apollo.ts). Tests set NODE_ENV=test and keep the checks.
 */
process.env['NODE_ENV'] ??= 'production';
