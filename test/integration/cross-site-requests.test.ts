import { describe, expect, it } from 'vitest';
import { graphql } from '../support/graphql-client.ts';
import { CREATE_PAYMENT } from '../support/operations.ts';
import { paymentInput, TENANT_A, useTestStack } from '../support/test-stack.ts';

/**
 * Why Apollo's CSRF prevention is off (gateway/graphql/apollo.ts): a forged cross-site request
 * carries what a browser adds by itself (cookies, an Origin), never an Authorization header, and
 * the gateway authenticates by that header alone and sets no cookie. Such a request is refused
 * before GraphQL runs, whatever its content type, and changes nothing.
 */
const stack = useTestStack('cross-site');

/** A "simple" request a page on another site can send without a preflight: a form's POST. */
async function forged(contentType: string) {
  const response = await fetch(`${stack.app.url}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': contentType,
      origin: 'https://attacker.invalid',
      cookie: 'session=stolen-ambient-credential',
    },
    body: JSON.stringify({
      query: CREATE_PAYMENT,
      variables: { input: paymentInput('forged-cross-site') },
    }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('a cross-site request forged from a browser', () => {
  it.each(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data'])(
    'as %s is refused unauthenticated, and makes no payment',
    async (contentType) => {
      const answer = await forged(contentType);
      expect(answer.status).toBe(401);
      expect(answer.body).toMatchObject({ errors: [{ extensions: { code: 'UNAUTHENTICATED' } }] });
      const { rows } = await stack.db.query(`SELECT 1 FROM payments WHERE reference = $1`, [
        'forged-cross-site',
      ]);
      expect(rows).toHaveLength(0);
    },
  );

  it('finds no cookie to ride on: no answer sets one', async () => {
    const answer = await graphql(stack.app.url, {
      apiKey: TENANT_A.apiKey,
      query: CREATE_PAYMENT,
      variables: { input: paymentInput('cookie-check') },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('set-cookie')).toBeNull();
    const page = await fetch(`${stack.app.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(page.headers.get('set-cookie')).toBeNull();
  });
});
