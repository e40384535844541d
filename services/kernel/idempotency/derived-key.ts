/**
 * Keys we present to downstream systems (the provider, the ledger, webhooks), derived from our
 * own records and the step: `provider_payment_<payment id>`. They never contain the client's
 * raw key — that is the client's secret-ish data and unique only within its tenant — and they
 * are deterministic, so a resumed attempt presents exactly the key the dead attempt used.
 */
const PART_PATTERN = /^[a-z][a-z0-9-]*$/;
const ID_PATTERN = /^[0-9a-f-]{36}$/;

export function derivedKey(parts: {
  system: string;
  subject: string;
  ourId: string;
  step?: string;
}): string {
  const { system, subject, ourId, step } = parts;
  for (const part of step === undefined ? [system, subject] : [system, subject, step]) {
    if (!PART_PATTERN.test(part)) throw new Error(`bad derived-key part: ${part}`);
  }
  if (!ID_PATTERN.test(ourId)) throw new Error('derived keys are built from our own UUIDs only');
  return step === undefined
    ? `${system}_${subject}_${ourId}`
    : `${system}_${subject}_${ourId}_${step}`;
}
