import { defineErrors } from '../lib/errors.ts';

/** What the edge refuses before any service runs. None is stored for a key: nothing ran. */
export const GATEWAY_ERRORS = defineErrors({
  UNAUTHENTICATED: { httpStatus: 401, stored: false, message: 'Missing or unknown API key.' },
  GRAPHQL_VALIDATION_FAILED: {
    httpStatus: 400,
    stored: false,
    message: 'The GraphQL document is not valid.',
  },
  PAYLOAD_TOO_LARGE: { httpStatus: 413, stored: false, message: 'The request body is too large.' },
  RATE_LIMITED: { httpStatus: 429, stored: false, message: 'Too many requests.' },
});
