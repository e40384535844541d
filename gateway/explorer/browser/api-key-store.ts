/** Where the API key is kept: this tab's sessionStorage, gone when the tab closes. */
export interface ApiKeyStore {
  read(): string;
  write(apiKey: string): void;
}

const ITEM = 'payments-gateway.explorer.api-key';

/**
 * The key survives a reload of this tab and nothing longer: never localStorage, never a cookie
 * (a cookie would ride along on every request to the origin). Storage can throw (disabled,
 * full, a privacy mode): the key is then kept only in the page's memory, which is still usable.
 */
export function sessionApiKeyStore(storage: Storage | null): ApiKeyStore {
  return {
    read() {
      try {
        return storage?.getItem(ITEM) ?? '';
      } catch {
        return '';
      }
    },
    write(apiKey) {
      try {
        if (apiKey === '') storage?.removeItem(ITEM);
        else storage?.setItem(ITEM, apiKey);
      } catch {
        // Memory only, as the comment above says.
      }
    },
  };
}
