/**
 * Events and webhooks: each effect has one event under its stable id (the webhook-id), the
 * events of a payment are exactly those its final state implies (never both "failed" and
 * "succeeded"), and each event reached its tenant's endpoint, signed, with every redelivery
 * carrying the same payload.
 */
import type { Snapshot } from './snapshot.ts';
import type { Findings } from './verdict.ts';
import type { WebhookDelivery } from './webhook-sink.ts';

/** The payment status an event's payload must show. */
const STATUS_OF_EVENT: Record<string, string> = {
  'payment.succeeded': 'SUCCEEDED',
  'payment.authorized': 'REQUIRES_CAPTURE',
  'payment.failed': 'FAILED',
  'payment.captured': 'SUCCEEDED',
  'payment.canceled': 'CANCELED',
  'refund.succeeded': 'SUCCEEDED',
};

export function auditWebhooks(input: {
  snapshot: Snapshot;
  deliveries: WebhookDelivery[];
  findings: Findings;
}): void {
  const { snapshot, deliveries, findings } = input;
  const tenantName = new Map([
    [snapshot.tenantIds.a, 'a'],
    [snapshot.tenantIds.b, 'b'],
  ]);
  const expected = expectedEvents(snapshot);
  const actual = new Set(snapshot.events.map((e) => `${e.tenant_id}/${e.id}`));
  for (const [key, why] of expected) {
    findings.check('webhooks', actual.has(key), () => `no event ${key.split('/')[1]} (${why})`);
  }
  for (const key of actual) {
    findings.check(
      'webhooks',
      expected.has(key),
      () => `event ${key.split('/')[1]} contradicts its payment's final state`,
    );
  }
  const byEvent = new Map<string, WebhookDelivery[]>();
  for (const d of deliveries) {
    byEvent.set(`${d.tenant}/${d.id}`, [...(byEvent.get(`${d.tenant}/${d.id}`) ?? []), d]);
  }
  const known = new Set<string>();
  for (const event of snapshot.events) {
    const key = `${tenantName.get(event.tenant_id) ?? '?'}/${event.id}`;
    known.add(key);
    const got = byEvent.get(key) ?? [];
    const accepted = got.filter((d) => d.answered < 300);
    if (
      !findings.check(
        'webhooks',
        accepted.length > 0,
        () =>
          `event ${event.id} (${event.type}) never delivered to its tenant's endpoint (${got.length} refused)`,
      )
    )
      continue;
    for (const d of got) {
      findings.check(
        'webhooks',
        d.verified,
        () => `delivery of ${event.id}: signature does not verify`,
      );
      findings.check(
        'webhooks',
        d.type === event.type && d.data === got[0]?.data,
        () => `event ${event.id}: redelivered as ${d.type} with another payload`,
      );
      findings.check(
        'webhooks',
        d.paymentStatus === STATUS_OF_EVENT[event.type],
        () => `event ${event.id} (${event.type}) carries payment status ${d.paymentStatus}`,
      );
    }
  }
  for (const key of byEvent.keys()) {
    findings.check(
      'webhooks',
      known.has(key),
      () => `webhook ${key} matches no event of that tenant`,
    );
  }
}

/** tenant/event id → why it must exist, from the payments' and operations' final states. */
function expectedEvents(snapshot: Snapshot): Map<string, string> {
  const expected = new Map<string, string>();
  const add = (tenantId: string, id: string, why: string) => expected.set(`${tenantId}/${id}`, why);
  for (const p of snapshot.payments) {
    const event = (name: string) =>
      add(p.tenant_id, `evt_payment_${p.id}_${name}`, `${p.capture_method} ${p.status}`);
    if (p.status === 'FAILED') event('failed');
    else if (p.capture_method === 'AUTOMATIC') event('succeeded');
    else {
      event('authorized');
      if (p.status === 'SUCCEEDED') event('captured');
      if (p.status === 'CANCELED') event('canceled');
    }
  }
  for (const op of snapshot.operations) {
    if (op.kind === 'refund' && op.status === 'SUCCEEDED') {
      add(op.tenant_id, `evt_refund_${op.id}_succeeded`, 'a succeeded refund');
    }
  }
  return expected;
}
