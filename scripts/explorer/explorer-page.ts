/**
 * The explorer's HTML page, served at GET /graphql. Nothing inline: a stylesheet, a module script
 * and an icon from the bundle, so a Content-Security-Policy of 'self' allows it all (without the
 * icon, every load would also ask for /favicon.ico and log a 404 in the console). The paths are
 * relative to /graphql, so the page also works where a proxy mounts the gateway under a prefix.
 */
export function explorerPage(assets: { script: string; stylesheet: string; icon: string }): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="referrer" content="no-referrer">
    <title>Payments gateway · GraphQL explorer</title>
    <link rel="icon" href="explorer/${assets.icon}" type="image/svg+xml">
    <link rel="stylesheet" href="explorer/${assets.stylesheet}">
    <script type="module" src="explorer/${assets.script}"></script>
  </head>
  <body>
    <div id="explorer"></div>
    <noscript>The explorer needs JavaScript. The API itself is POST /graphql (docs/api.md).</noscript>
  </body>
</html>
`;
}
