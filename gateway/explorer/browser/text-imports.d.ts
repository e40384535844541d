/** The GraphQL schema, imported as text: esbuild's `text` loader (scripts/explorer/). */
declare module '*.graphql' {
  const text: string;
  export default text;
}
