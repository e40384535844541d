import type { ServerResponse } from 'node:http';
import { TRPCError, type AnyTRPCRouter } from '@trpc/server';
import { resolveResponse } from '@trpc/server/http';

/** What a caller without the token is told: how to get in, never which token was expected. */
export const INTERNAL_TOKEN_REQUIRED =
  'missing or wrong internal token: send Authorization: Bearer <INTERNAL_TOKEN> (embedded mode: .data/internal-token)';

/**
 * Answers a /trpc request that lacks the internal token with 401 in tRPC's own error shape
 * (code UNAUTHORIZED, formatted by `router`'s error formatter), so @trpc/client raises a
 * TRPCClientError with `data.code` instead of "Unable to transform response from server".
 *
 * tRPC itself makes the answer, from a bodiless stand-in for the request that carries the
 * refusal as a request-level error: it is one error object, which httpLink reads as is and the
 * batch links (plain and streaming, on a non-2xx status) give to every call of the batch. The
 * caller's own request is never parsed, so neither its path, its content type nor its body can
 * make it anything but this 401, and nothing of the procedures is told before the token is
 * checked. Its body stays unread: the connection closes after the answer.
 */
export async function refuseWithoutToken(
  res: ServerResponse,
  router: AnyTRPCRouter,
): Promise<void> {
  const refusal = new TRPCError({ code: 'UNAUTHORIZED', message: INTERNAL_TOKEN_REQUIRED });
  const answer = await resolveResponse({
    router,
    req: new Request('http://internal.invalid/trpc'),
    path: '',
    error: refusal,
    // Never reached for a procedure (the request-level error comes first), and no context is
    // made for a caller who has not shown the token.
    createContext: () => Promise.reject(refusal),
  });
  const body = await answer.text();
  res.writeHead(answer.status, {
    ...Object.fromEntries(answer.headers),
    'content-length': Buffer.byteLength(body),
    'www-authenticate': 'Bearer',
    connection: 'close',
  });
  res.end(body);
}
