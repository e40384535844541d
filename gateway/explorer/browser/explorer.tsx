/**
 * The explorer's entry module, bundled by scripts/explorer/build-explorer-bundle.ts into
 * dist/explorer with graphiql's stylesheet. It runs under a Content-Security-Policy of 'self'
 * only (gateway/explorer/explorer-responses.ts): nothing here may load from another origin,
 * evaluate strings or add inline script.
 */
import 'graphiql/style.css';
import './explorer.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { sessionApiKeyStore } from './api-key-store.ts';
import { ExplorerApp } from './explorer-app.tsx';
import { freshIdempotencyKey } from './idempotency-key.ts';

const container = document.getElementById('explorer');
if (container === null) throw new Error('explorer: the page has no #explorer element');
createRoot(container).render(
  <StrictMode>
    <ExplorerApp
      endpoint={window.location.pathname}
      keyStore={sessionApiKeyStore(sessionStorageOrNull())}
      idempotencyKey={freshIdempotencyKey(window.crypto)}
      fetch={(url, init) => window.fetch(url, init)}
    />
  </StrictMode>,
);

/** Reading window.sessionStorage itself throws where storage is disabled. */
function sessionStorageOrNull(): Storage | null {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
}
