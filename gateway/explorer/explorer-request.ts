/** The media types GraphQL over HTTP answers in; a client naming one of them wants the API. */
const GRAPHQL_MEDIA_TYPES = ['application/graphql-response+json', 'application/json'];

/**
 * Whether a request to /graphql is a browser asking for the explorer: a GET whose Accept names
 * text/html above every JSON type. A browser's navigation does (`text/html,…,*\/*;q=0.8`); a
 * GraphQL client names JSON, or nothing, or `*\/*`, and keeps today's answer. A tie goes to the
 * API, so no client that lists both gets a page where it used to get JSON.
 */
export function asksForExplorerPage(
  method: string | undefined,
  accept: string | undefined,
): boolean {
  if (method !== 'GET' || accept === undefined) return false;
  const weights = acceptWeights(accept);
  const html = weights.get('text/html') ?? 0;
  const json = Math.max(0, ...GRAPHQL_MEDIA_TYPES.map((type) => weights.get(type) ?? 0));
  return html > 0 && html > json;
}

/** Each media type named outright in an Accept header, with its weight (RFC 9110 §12.5.1). */
function acceptWeights(accept: string): Map<string, number> {
  const weights = new Map<string, number>();
  for (const range of accept.split(',')) {
    const [type = '', ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    let weight = 1;
    for (const param of params) {
      const match = /^q=([01](?:\.\d{0,3})?)$/.exec(param);
      if (match?.[1] !== undefined) weight = Number(match[1]);
    }
    if (type !== '' && weight > (weights.get(type) ?? -1)) weights.set(type, weight);
  }
  return weights;
}
