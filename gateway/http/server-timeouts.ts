import { createServer, type RequestListener, type Server } from 'node:http';
import { KEY_WAIT_MAX_SECONDS } from './prefer-wait.ts';

/**
 * How long a client may take to send a request's headers. Node's default (a minute) lets a
 * client that sends a header line now and then (slowloris) hold a socket that long; a merchant's
 * backend sends its few headers in one packet, so ten seconds only ever cuts a stalled or
 * hostile client.
 */
export const HEADERS_TIMEOUT_MS = 10_000;

/**
 * How long an idle keep-alive connection stays open. Above the idle timeout of the load
 * balancers a gateway sits behind (commonly 60 s): when the server closes first, a request the
 * balancer sends on the closing connection fails with a reset (a 502 to the merchant). Idle
 * sockets cost a few KB each, and a drain closes them at once.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/**
 * How often Node checks open connections against the headers and request timeouts. Its default
 * (30 s) would let a trickling client outlive a timeout by up to that much; a check walks only
 * the connections with a request in progress, so once a second costs nothing that matters.
 */
export const CONNECTIONS_CHECKING_INTERVAL_MS = 1_000;

/**
 * Requests per connection before the server asks the client to reconnect: 0, no limit. The
 * clients are merchant backends and load balancers that keep a handful of connections busy;
 * spreading them over a grown fleet is the balancer's job, and a cap would only add handshakes.
 */
export const MAX_REQUESTS_PER_SOCKET = 0;

/**
 * How long a request's body may take to arrive once its headers have been read (and its key
 * authenticated). The largest body we accept (100 KB) crosses a slow mobile link in a couple of
 * seconds and a merchant's backend sends it in one write; ten seconds only ever cuts a client
 * trickling it, which would otherwise hold the socket for the whole request timeout (30 s).
 */
export const BODY_TIMEOUT_MS = 10_000;

/**
 * Open connections per listening server, the default of MAX_CONNECTIONS. Past the cap a new
 * connection is closed as soon as it is accepted, so a flood of idle or trickling sockets costs
 * the process a counter, not a file descriptor and buffers each: the cap sits below the common
 * soft limit of 1,024 descriptors, leaving room for the database pools and the sockets to the
 * provider and to webhook endpoints, which would otherwise fail with EMFILE for every tenant.
 * The clients are load balancers and merchant backends that keep tens of connections each.
 */
export const DEFAULT_MAX_CONNECTIONS = 800;

/**
 * How long a request may keep its client waiting beyond the provider: a duplicate's bounded
 * wait for the first request's outcome (`Prefer: wait`, capped at 10 s by docs/api.md §1.3).
 */
const REQUEST_WAIT_MAX_MS = KEY_WAIT_MAX_SECONDS * 1_000;
/** Room for the database, a body on a slow link and the scheduler, on top of the above. */
const REQUEST_SLACK_MS = 10_000;

/**
 * The longest legitimate exchange: one provider call and one probe (each up to the provider
 * timeout), a bounded wait, and slack — 30 s with the defaults. It is the default request
 * timeout.
 */
export function longestExchangeMs(providerTimeoutMs: number): number {
  return 2 * providerTimeoutMs + REQUEST_WAIT_MAX_MS + REQUEST_SLACK_MS;
}

/**
 * A socket's idle timeout is this many longest exchanges. Under overload a request also queues
 * for database connections (up to POOL_CONNECTION_TIMEOUT_MS per checkout, a few checkouts per
 * request), silently; cutting its socket would make its client retry into the same overload.
 * A socket silent for twice the longest exchange has lost its client.
 */
const SOCKET_IDLE_PER_LONGEST_EXCHANGE = 2;

/** The socket idle timeout for a provider timeout: 60 s with the defaults. */
export function socketIdleTimeoutMs(providerTimeoutMs: number): number {
  return SOCKET_IDLE_PER_LONGEST_EXCHANGE * longestExchangeMs(providerTimeoutMs);
}

export interface ServerTimeouts {
  /**
   * How long receiving one request may take (Node's requestTimeout). Node measures it until
   * the request has been received, not answered, so what it cuts is a client trickling its
   * body (Node's default holds such a socket five minutes). The default is kept above the
   * longest exchange all the same, so that no other reading of it (a proxy in front, a Node
   * change) can cut a payment the provider is still deciding. Tests shorten it.
   */
  requestTimeoutMs: number;
  /**
   * How long a socket may send and receive nothing while a request is open (server.timeout;
   * idle keep-alive sockets have KEEP_ALIVE_TIMEOUT_MS instead). A request waiting on the
   * provider is silent, so this is well above the longest exchange; without it, a socket whose
   * client vanished without closing it (a crashed host, a dropped NAT mapping) or stopped
   * reading its answer would stay open until TCP gives up, many minutes later.
   */
  socketIdleTimeoutMs: number;
}

/** An HTTP server with every timeout set on purpose, holding at most `maxConnections`. */
export function createTimedServer(
  listener: RequestListener,
  timeouts: ServerTimeouts,
  maxConnections: number,
): Server {
  const { requestTimeoutMs } = timeouts;
  const server = createServer(
    {
      // Node refuses a headers timeout above the request timeout (tests use short ones).
      headersTimeout: Math.min(HEADERS_TIMEOUT_MS, requestTimeoutMs),
      requestTimeout: requestTimeoutMs,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      connectionsCheckingInterval: Math.min(CONNECTIONS_CHECKING_INTERVAL_MS, requestTimeoutMs),
    },
    listener,
  );
  server.maxRequestsPerSocket = MAX_REQUESTS_PER_SOCKET;
  server.timeout = timeouts.socketIdleTimeoutMs;
  server.maxConnections = maxConnections;
  return server;
}
