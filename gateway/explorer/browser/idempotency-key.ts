/**
 * A fresh idempotency key for the example createPayment. getRandomValues, not randomUUID: the
 * latter exists only in secure contexts, and the explorer is also opened over plain http on a
 * host other than localhost (a gateway on a LAN address), where the page would fail to start.
 */
export function freshIdempotencyKey(crypto: Pick<Crypto, 'getRandomValues'>): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return `explorer-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}
