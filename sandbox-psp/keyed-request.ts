// Requests that name an idempotency key. A POST that binds one (a charge, or an operation on one)
// is looked at only with a usable Idempotency-Key and a readable body that parses; anything else
// is refused here (a 400, or a 413 for a body too large) and binds nothing. A probe names its key
// in the path, URL-encoded.
import type { ServerResponse } from 'node:http';
import type { KeyCheck, Parsed } from './charge-request-parser.ts';
import {
  errorAnswer,
  invalidRequest,
  sendJson,
  unreadableBodyAnswer,
  type BodyResult,
} from './http-json.ts';

/**
 * The key and the parsed request; undefined once the refusal is sent (a body whose client went
 * away gets no answer: there is no one to send it to).
 */
export function acceptKeyedRequest<T>(
  response: ServerResponse,
  read: { keyCheck: KeyCheck; body: BodyResult },
  parse: (body: unknown) => Parsed<T>,
): { key: string; request: T } | undefined {
  const { keyCheck, body } = read;
  if (!keyCheck.ok) {
    const missing = errorAnswer({ status: 400, code: 'IDEMPOTENCY_KEY_MISSING' });
    sendJson(response, keyCheck.missing ? missing : invalidRequest(keyCheck.message));
    return undefined;
  }
  if (!body.ok) {
    const unreadable = unreadableBodyAnswer(body.reason);
    if (unreadable !== undefined) sendJson(response, unreadable);
    return undefined;
  }
  const parsed = parse(body.value);
  if (!parsed.ok) {
    sendJson(response, invalidRequest(parsed.message));
    return undefined;
  }
  return { key: keyCheck.key, request: parsed.value };
}

/** The key a probe's path names, decoded; undefined once the 400 for bad encoding is sent. */
export function decodeKeyInPath(encodedKey: string, response: ServerResponse): string | undefined {
  try {
    return decodeURIComponent(encodedKey);
  } catch {
    sendJson(response, invalidRequest('idempotency key is not valid URL encoding'));
    return undefined;
  }
}
