import { createTRPCClient, httpLink, TRPCClientError, type TRPCClient } from '@trpc/client';
import type { AppRouter } from '../services/router.ts';
import { ConfigError } from './usage.ts';

export type OpsClient = TRPCClient<AppRouter>['ops'];
export type TenantsClient = TRPCClient<AppRouter>['tenants'];

export const DEFAULT_GATEWAY_URL = 'http://127.0.0.1:4000';
/**
 * A wedged gateway (pool exhausted, provider hanging inside a re-drive) would otherwise hold
 * the terminal forever. Generous: a re-drive legitimately waits for one provider call and probe.
 */
export const REQUEST_TIMEOUT_MS = 120_000;

export interface GatewayConfig {
  url: string;
  token: string;
}

export function gatewayConfig(env: NodeJS.ProcessEnv): GatewayConfig {
  const token = env['INTERNAL_TOKEN'];
  if (token === undefined || token.trim() === '') {
    throw new ConfigError(
      'INTERNAL_TOKEN is not set: export the gateway internal token (the one it serves /trpc with; an embedded gateway keeps it in .data/internal-token)',
    );
  }
  const raw = env['GATEWAY_URL']?.trim() || DEFAULT_GATEWAY_URL;
  // "localhost:4000" parses as a URL with scheme "localhost:": insist on http(s).
  if (!URL.canParse(raw) || !/^https?:$/.test(new URL(raw).protocol))
    throw new ConfigError(`GATEWAY_URL must be an http(s) URL, not ${raw}`);
  return { url: raw.replace(/\/+$/, ''), token: token.trim() };
}

/** The internal routers an operator uses: ops (stuck requests) and tenants (API keys). */
export function internalClients(config: GatewayConfig): {
  ops: OpsClient;
  tenants: TenantsClient;
} {
  const client = createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: `${config.url}/trpc`,
        headers: { authorization: `Bearer ${config.token}` },
      }),
    ],
  });
  return { ops: client.ops, tenants: client.tenants };
}

/** A call that got no answer within its deadline; the gateway may still be acting on it. */
export class CallTimeoutError extends Error {
  override readonly name = 'CallTimeoutError';
}

/**
 * Runs one call under its own deadline, so a sweep's later calls are not cut short by an earlier
 * call's. tRPC reports an aborted fetch as a bare AbortError, losing that our deadline caused it:
 * the signal tells.
 */
export async function withDeadline<T>(
  call: (options: { signal: AbortSignal }) => Promise<T>,
  { timeoutMs = REQUEST_TIMEOUT_MS }: { timeoutMs?: number } = {},
): Promise<T> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    return await call({ signal });
  } catch (error) {
    if (signal.aborted) {
      throw new CallTimeoutError(
        `no answer within ${timeoutMs / 1000}s; the gateway may still be working on it, run list to see its state`,
        { cause: error },
      );
    }
    throw error;
  }
}

/** HTTP statuses the gateway answers before tRPC routing, named the way tRPC names them. */
const CODE_BY_HTTP_STATUS: ReadonlyMap<number, string> = new Map([
  [400, 'BAD_REQUEST'],
  [401, 'UNAUTHORIZED'],
  [403, 'FORBIDDEN'],
  [404, 'NOT_FOUND'],
  [413, 'PAYLOAD_TOO_LARGE'],
  [429, 'TOO_MANY_REQUESTS'],
  [500, 'INTERNAL_SERVER_ERROR'],
  [502, 'BAD_GATEWAY'],
  [503, 'SERVICE_UNAVAILABLE'],
  [504, 'GATEWAY_TIMEOUT'],
]);

export interface CallFailure {
  /** The tRPC error code ('CONFLICT', 'UNAUTHORIZED', …), or NETWORK / TIMEOUT / UNEXPECTED. */
  code: string;
  httpStatus: number | null;
  message: string;
}

/**
 * What went wrong with one call, in words an operator can act on. The internal token is never
 * part of it: nothing here echoes request headers.
 */
export function describeFailure(error: unknown, config: GatewayConfig): CallFailure {
  if (error instanceof CallTimeoutError) {
    return { code: 'TIMEOUT', httpStatus: null, message: error.message };
  }
  if (!(error instanceof TRPCClientError)) {
    return { code: 'UNEXPECTED', httpStatus: null, message: messageOf(error) };
  }
  const data = recordOf(error.data);
  const code = data?.['code'];
  const status = data?.['httpStatus'];
  if (typeof code === 'string') {
    return {
      code,
      httpStatus: typeof status === 'number' ? status : null,
      // The gateway's words name its header; the operator's lever is the variable.
      message:
        code === 'UNAUTHORIZED'
          ? `the gateway at ${config.url} refused INTERNAL_TOKEN`
          : readableMessage(error.message),
    };
  }
  // Not a tRPC answer: an older gateway's 401 in front of /trpc, a proxy's error page, or no
  // answer at all (connection refused, DNS).
  const response = recordOf(error.meta)?.['response'];
  const httpStatus = response instanceof Response ? response.status : null;
  if (httpStatus !== null) {
    const body = recordOf(recordOf(recordOf(error.meta)?.['responseJSON'])?.['error']);
    const bodyMessage = body?.['message'];
    return {
      code: CODE_BY_HTTP_STATUS.get(httpStatus) ?? `HTTP_${httpStatus}`,
      httpStatus,
      message:
        httpStatus === 401
          ? `the gateway at ${config.url} refused INTERNAL_TOKEN`
          : typeof bodyMessage === 'string'
            ? bodyMessage
            : `unexpected answer from ${config.url}/trpc`,
    };
  }
  return {
    code: 'NETWORK',
    httpStatus: null,
    message: `cannot reach the gateway at ${config.url}: ${messageOf(error.cause ?? error)}`,
  };
}

export function formatFailure(failure: CallFailure): string {
  const status = failure.httpStatus === null ? '' : ` (HTTP ${failure.httpStatus})`;
  return `${failure.code}${status}: ${failure.message}`;
}

/** tRPC reports invalid input as the JSON of zod's issues: one line per issue reads better. */
function readableMessage(message: string): string {
  try {
    const issues: unknown = JSON.parse(message);
    if (!Array.isArray(issues)) return message;
    return issues
      .map((issue) => {
        const fields = recordOf(issue);
        const path = Array.isArray(fields?.['path']) ? fields['path'].join('.') : '';
        const text = fields?.['message'];
        return `${path === '' ? '' : `${path}: `}${typeof text === 'string' ? text : 'invalid'}`;
      })
      .join('; ');
  } catch {
    return message;
  }
}

function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = recordOf(error.cause)?.['code'];
  return typeof code === 'string' ? `${error.message} (${code})` : error.message;
}

function recordOf(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null
    ? (value as Record<string, unknown>)
    : undefined;
}
