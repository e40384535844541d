import { AppError, defineErrors } from '../../lib/errors.ts';

/** The notifications service's codes. */
export const NOTIFICATION_ERRORS = defineErrors({
  WEBHOOK_URL_NOT_ALLOWED: {
    httpStatus: 400,
    stored: false,
    message:
      'The webhook URL points inside (loopback, private, reserved, an internal name, non-canonical IPv4, a refused port): use a public https URL.',
  },
  WEBHOOK_ENDPOINT_LIMIT_REACHED: {
    httpStatus: 422,
    stored: true,
    message:
      'This tenant has all the webhook endpoints it may (WEBHOOK_ENDPOINTS_PER_TENANT): delete one first.',
  },
  WEBHOOK_ENDPOINT_NOT_FOUND: {
    httpStatus: 404,
    stored: true,
    message: 'No such webhook endpoint (or it was deleted).',
  },
  WEBHOOK_ENDPOINT_DISABLED: {
    httpStatus: 422,
    stored: true,
    message: 'The webhook endpoint is disabled: enable it first.',
  },
  WEBHOOK_DELIVERY_NOT_FOUND: {
    httpStatus: 404,
    stored: true,
    message: 'This endpoint has no delivery of that event.',
  },
});

/**
 * A webhook URL that points inside, judged at registration from the URL as written. Never
 * stored for the key: the merchant fixes the URL and sends the same key again. `allowedBy` is
 * the WEBHOOK_ALLOWED_HOSTS entry that would allow it (null: none would), so a developer whose
 * local receiver is refused learns the setting, not only that a rule exists. The message holds
 * nothing but the merchant's own host and that entry, whatever the allow-list holds.
 */
export class WebhookUrlNotAllowedError extends AppError {
  constructor(reason: string, allowedBy: string | null) {
    super(NOTIFICATION_ERRORS.WEBHOOK_URL_NOT_ALLOWED, {
      message:
        allowedBy === null
          ? `webhook URL not allowed: ${reason}; use a public https URL`
          : `webhook URL not allowed: ${reason}; to allow it set WEBHOOK_ALLOWED_HOSTS=${allowedBy} and restart`,
      details: { field: 'url' },
    });
  }
}

/**
 * At delivery, the endpoint's host is (or resolves to) an address the policy refuses: DNS was
 * changed after registration, or the name always pointed inside. A failed attempt, retried with
 * backoff like any other, so a record fixed in DNS heals by itself.
 */
export class WebhookAddressNotAllowedError extends Error {
  constructor(
    readonly address: string,
    readonly reason: string,
  ) {
    super(`address not allowed: ${address} (${reason})`);
    this.name = 'WebhookAddressNotAllowedError';
  }
}
