import { associatedData, isEnvelope } from '../../lib/crypto/envelope.ts';
import type { Keyring } from '../../lib/crypto/keyring.ts';

/** Which endpoint a sealed secret belongs to: it opens on that row only. */
export interface EndpointRef {
  tenantId: string;
  endpointId: string;
}

function secretAssociatedData(ref: EndpointRef): Buffer {
  return associatedData(['webhook-secret', ref.tenantId, ref.endpointId]);
}

/**
 * A signing secret as `webhook_endpoints.secret` holds it: sealed under the keyring's first key
 * and bound to its endpoint, so a database reader cannot forge our webhooks and a secret copied
 * to another tenant's endpoint does not open.
 */
export function sealWebhookSecret(keyring: Keyring, ref: EndpointRef, secret: string): string {
  return keyring.seal(secret, secretAssociatedData(ref));
}

/**
 * The signing secret of a stored endpoint. A row written before sealing holds it in clear
 * (`whsec_…`) and is used as it is until `ops reencrypt` seals it; anything else must open,
 * or this throws (an unknown key, a tampered or transplanted value), never signs with garbage.
 */
export function openWebhookSecret(keyring: Keyring, ref: EndpointRef, stored: string): string {
  if (!isEnvelope(stored)) return stored;
  return keyring.open(
    stored,
    secretAssociatedData(ref),
    `the signing secret of webhook endpoint ${ref.endpointId}`,
  );
}
