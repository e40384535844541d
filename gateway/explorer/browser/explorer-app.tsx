import { GraphiQL } from 'graphiql';
import { buildSchema } from 'graphql';
import { useMemo, useState } from 'react';
import paymentsSchema from '../../../schema/payments.graphql';
import { ApiKeyForm } from './api-key-form.tsx';
import type { ApiKeyStore } from './api-key-store.ts';
import { bearerFetcher } from './bearer-fetcher.ts';
import { exampleTabs } from './example-operations.ts';
import { memoryStorage } from './memory-storage.ts';

export interface ExplorerAppProps {
  /** The page's own path: /graphql, wherever a proxy mounts it. */
  endpoint: string;
  keyStore: ApiKeyStore;
  idempotencyKey: string;
  fetch: (url: string, init: RequestInit) => Promise<Response>;
}

/**
 * The API key field above GraphiQL. The schema is the one this build was made from, not an
 * introspection: the gateway's depth limit (gateway/graphql/limits.ts) refuses the standard
 * introspection query, and the bundle and the server's schema come from the same build.
 */
export function ExplorerApp(props: ExplorerAppProps) {
  const [apiKey, setApiKey] = useState(() => props.keyStore.read());
  const schema = useMemo(() => buildSchema(paymentsSchema), []);
  const storage = useMemo(() => memoryStorage(), []);
  const tabs = useMemo(() => exampleTabs(props.idempotencyKey), [props.idempotencyKey]);
  const fetcher = useMemo(
    () => bearerFetcher({ endpoint: props.endpoint, apiKey, fetch: props.fetch }),
    [props.endpoint, props.fetch, apiKey],
  );
  const use = (key: string) => {
    props.keyStore.write(key);
    setApiKey(key);
  };
  return (
    <div className="explorer">
      <ApiKeyForm inUse={apiKey} onUse={use} />
      <GraphiQL
        fetcher={fetcher}
        schema={schema}
        storage={storage}
        defaultTabs={tabs}
        // graphiql 4 opens the first tab with its query but empty variables: given here, the
        // first createPayment sends its input instead of failing for want of $input.
        variables={tabs[0]?.variables ?? undefined}
        defaultEditorToolsVisibility="variables"
      />
    </div>
  );
}
