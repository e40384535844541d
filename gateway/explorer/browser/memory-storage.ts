import type { GraphiQLProps } from 'graphiql';

type GraphiQLStorage = NonNullable<GraphiQLProps['storage']>;

/**
 * GraphiQL's storage, kept in the page: by default it writes tabs, variables and query history
 * to localStorage, where a payments session (amounts, references, payment ids) would outlive the
 * tab on a shared machine, and where saved tabs would replace the examples with a stale
 * idempotency key.
 */
export function memoryStorage(): GraphiQLStorage {
  const items = new Map<string, string>();
  return {
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => void items.set(key, value),
    removeItem: (key) => void items.delete(key),
    clear: () => items.clear(),
    get length() {
      return items.size;
    },
  };
}
