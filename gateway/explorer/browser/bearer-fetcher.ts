import type { GraphiQLProps } from 'graphiql';
import { GraphQLError, type ExecutionResult } from 'graphql';

type Fetcher = GraphiQLProps['fetcher'];
type FetchFn = (url: string, init: RequestInit) => Promise<Response>;

/** What the result pane shows instead of a request when no key is in use. */
export const NO_API_KEY_MESSAGE = 'No API key in use, so nothing was sent: enter one above.';

/**
 * GraphiQL's fetcher: a POST to the page's own /graphql with the key as a bearer token. Without a
 * key nothing is sent: every keyless request would be a 401 that counts against the client
 * address's failed-authentication limit (RATE_LIMIT_UNAUTHENTICATED_PER_SECOND). The key field
 * wins over an Authorization typed into the headers editor, so what the page shows is what is
 * sent. An answer that is not JSON (a proxy's error page) is shown as text, not thrown away.
 */
export function bearerFetcher(opts: { endpoint: string; apiKey: string; fetch: FetchFn }): Fetcher {
  return async (params, fetcherOpts) => {
    if (opts.apiKey === '') return failed(NO_API_KEY_MESSAGE);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(fetcherOpts?.headers ?? {}))
      headers[name.toLowerCase()] = String(value);
    const response = await opts.fetch(opts.endpoint, {
      method: 'POST',
      headers: {
        ...headers,
        accept: 'application/graphql-response+json, application/json',
        'content-type': 'application/json',
        authorization: `Bearer ${opts.apiKey}`,
      },
      body: JSON.stringify(params),
      credentials: 'omit',
    });
    const text = await response.text();
    try {
      // The gateway's answer, shown as it came: GraphiQL prints it, it does not trust it.
      return JSON.parse(text) as ExecutionResult;
    } catch {
      return failed(`HTTP ${response.status}: ${text.slice(0, 500)}`);
    }
  };
}

/** A result pane's worth of error, in GraphQL's shape so GraphiQL shows it like any other. */
function failed(message: string): ExecutionResult {
  return { errors: [new GraphQLError(message)] };
}
