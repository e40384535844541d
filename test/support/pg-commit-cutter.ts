import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP proxy in front of PostgreSQL that can cut a connection at the worst moment: after a
 * COMMIT has reached the server (so it commits) and before the answer gets back (so the client
 * cannot know). `cutAfterNextCommit()` arms it for one COMMIT, sent alone or at the end of a
 * round trip with the transaction's statements (withOneRoundTrip). Plain protocol only: the
 * test server speaks to it without TLS.
 */
export interface CommitCutter {
  /** postgres:// URL that goes through the proxy to `targetUrl`'s database. */
  url: string;
  cutAfterNextCommit(): void;
  /**
   * Holds back what the server sends on the connection that next sends a COMMIT together with
   * the bytes of `with` (a parameter of the same round trip, say an idempotency key): its
   * answers, an error, its closing, until the returned function is called. The client learns how
   * its transaction ended only then, whatever happened on the server meanwhile.
   */
  holdAnswersAfterNextCommit(withBytes: string): HeldAnswers;
  /** How many COMMITs were cut. */
  cuts(): number;
  close(): Promise<void>;
}

/** The simple-query message node-pg sends for client.query('COMMIT'): 'Q', length, text, NUL. */
const COMMIT_QUERY = Buffer.concat([
  Buffer.from('Q'),
  Buffer.from([0, 0, 0, 11]),
  Buffer.from('COMMIT\0'),
]);

/** The start of the server's ReadyForQuery: 'Z', length 5 (then the transaction status). */
const READY_FOR_QUERY = Buffer.from([0x5a, 0, 0, 0, 5]);

/** The server's CommandComplete for a COMMIT: 'C', length, the tag, NUL. */
const COMMIT_COMPLETE = Buffer.concat([
  Buffer.from('C'),
  Buffer.from([0, 0, 0, 11]),
  Buffer.from('COMMIT\0'),
]);

/**
 * The Parse message of a COMMIT in an extended-protocol round trip (pipelined-statements.ts):
 * 'P', length, the unnamed statement's empty name, the text, and no parameter types.
 */
const COMMIT_PARSE = Buffer.concat([
  Buffer.from('P'),
  Buffer.from([0, 0, 0, 14]),
  Buffer.from('\0COMMIT\0'),
  Buffer.from([0, 0]),
]);

export interface HeldAnswers {
  /** Whether a round trip matched: its connection's answers are being held. */
  engaged(): boolean;
  /** Delivers what was held, in order, and stops holding. */
  release(): void;
}

interface Hold {
  withBytes: Buffer;
  engaged: boolean;
  /** What the server sent (and its closing), in order, waiting for release. */
  held: Array<() => void>;
  released: boolean;
}

export async function startCommitCutter(targetUrl: string): Promise<CommitCutter> {
  const target = new URL(targetUrl);
  const sockets = new Set<Socket>();
  let armed = false;
  let holdArmed: Hold | null = null;
  let cuts = 0;
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    let commitInFlight = false;
    let hold: Hold | null = null;
    /** Runs `deliver` now, or on release while this connection's answers are held. */
    const fromServer = (deliver: () => void) => {
      if (hold !== null && !hold.released) hold.held.push(deliver);
      else deliver();
    };
    client.on('data', (chunk: Buffer) => {
      const commit = chunk.includes(COMMIT_QUERY) || chunk.includes(COMMIT_PARSE);
      if (armed && commit) {
        armed = false;
        commitInFlight = true;
      }
      if (holdArmed !== null && commit && chunk.includes(holdArmed.withBytes)) {
        hold = holdArmed;
        hold.engaged = true;
        holdArmed = null;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => fromServer(() => forward(chunk)));
    const forward = (chunk: Buffer) => {
      if (commitInFlight && !chunk.includes(COMMIT_COMPLETE) && chunk.includes(READY_FOR_QUERY)) {
        // The round trip ended without committing (a statement failed): nothing to cut.
        commitInFlight = false;
      }
      if (commitInFlight && chunk.includes(COMMIT_COMPLETE)) {
        // The server has answered the COMMIT, so it has committed. Drop the answer and the line.
        cuts += 1;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    };
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', () => fromServer(end)).on('error', () => fromServer(end));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(targetUrl);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as AddressInfo).port);
  return {
    url: proxied.toString(),
    cutAfterNextCommit: () => void (armed = true),
    holdAnswersAfterNextCommit(withBytes) {
      const armedHold: Hold = {
        withBytes: Buffer.from(withBytes),
        engaged: false,
        held: [],
        released: false,
      };
      holdArmed = armedHold;
      return {
        engaged: () => armedHold.engaged,
        release() {
          if (holdArmed === armedHold) holdArmed = null;
          armedHold.released = true;
          for (const deliver of armedHold.held.splice(0)) deliver();
        },
      };
    },
    cuts: () => cuts,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
