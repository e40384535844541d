import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP proxy in front of PostgreSQL that can cut a connection at the worst moment: after a
 * transaction's commit has reached the server (so it commits) and before the answer gets back
 * (so the client cannot know). `cutAfterNextCommit()` arms it for one commit: a COMMIT sent
 * alone (withTransaction), or the end of a round trip of several statements that PostgreSQL
 * runs as one implicit transaction and commits at its Sync (withOneRoundTrip). Plain protocol
 * only: the test server speaks to it without TLS.
 */
export interface CommitCutter {
  /** postgres:// URL that goes through the proxy to `targetUrl`'s database. */
  url: string;
  cutAfterNextCommit(): void;
  /**
   * Holds back what the server sends on the connection that next sends a commit together with
   * the bytes of `with` (a parameter of the same round trip, say an idempotency key): its
   * answers, an error, its closing, until the returned function is called. The client learns how
   * its transaction ended only then, whatever happened on the server meanwhile.
   */
  holdAnswersAfterNextCommit(withBytes: string): HeldAnswers;
  /**
   * Cuts, before the server gets it, the next connection that sends a message holding the
   * bytes of `withBytes`: that statement never runs, and its client sees its connection lost.
   */
  refuseNext(withBytes: string): void;
  /** Withdraws a refuseNext that nothing has met yet. */
  refuseNothing(): void;
  /** How many statements were refused. */
  refusals(): number;
  /** How many commits were cut. */
  cuts(): number;
  close(): Promise<void>;
}

/** The simple-query message node-pg sends for client.query('COMMIT'): 'Q', length, text, NUL. */
const COMMIT_QUERY = Buffer.concat([
  Buffer.from('Q'),
  Buffer.from([0, 0, 0, 11]),
  Buffer.from('COMMIT\0'),
]);

/** The server's CommandComplete for a COMMIT: 'C', length, the tag, NUL. */
const COMMIT_COMPLETE = Buffer.concat([
  Buffer.from('C'),
  Buffer.from([0, 0, 0, 11]),
  Buffer.from('COMMIT\0'),
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

/**
 * A round trip a client sent, up to its Sync (extended protocol) or a simple Query: whether
 * it ends a transaction, and its bytes (to match a parameter).
 */
interface RoundTrip {
  bytes: Buffer;
  /** COMMIT sent as a simple query: it commits unless the transaction had failed. */
  commitQuery: boolean;
  /**
   * Several statements before one Sync. Outside BEGIN they are one implicit transaction that
   * the Sync commits; inside, the Sync commits nothing, which the server's answer tells apart.
   */
  pipelined: boolean;
}

/**
 * Splits a protocol stream into messages (a type byte, then a length that counts itself),
 * across chunk boundaries. `untypedFirst`: the client's stream opens with a startup message
 * that has no type byte.
 */
function messageReader(untypedFirst: boolean) {
  let pending: Buffer = Buffer.alloc(0);
  let first = untypedFirst;
  return (chunk: Buffer, onMessage: (type: number, body: Buffer) => void) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    for (;;) {
      const header = first ? 4 : 5;
      if (pending.length < header) return;
      const length = pending.readInt32BE(first ? 0 : 1);
      const size = (first ? 0 : 1) + length;
      if (pending.length < size) return;
      const type = first ? 0 : pending[0]!;
      const body = pending.subarray(header, size);
      pending = pending.subarray(size);
      // An SSLRequest or a cancel request would be followed by another untyped message; the
      // test server is reached without TLS, so the startup message is the only one.
      first = false;
      onMessage(type, body);
    }
  };
}

const MESSAGE = {
  query: 'Q'.charCodeAt(0),
  execute: 'E'.charCodeAt(0),
  sync: 'S'.charCodeAt(0),
  error: 'E'.charCodeAt(0),
  readyForQuery: 'Z'.charCodeAt(0),
  idle: 'I'.charCodeAt(0),
} as const;

export async function startCommitCutter(targetUrl: string): Promise<CommitCutter> {
  const target = new URL(targetUrl);
  const sockets = new Set<Socket>();
  let armed = false;
  let holdArmed: Hold | null = null;
  let refuse: Buffer | null = null;
  let cuts = 0;
  let refusals = 0;
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    const readClient = messageReader(true);
    const readServer = messageReader(false);
    let tripBytes: Buffer[] = [];
    let executes = 0;
    /** The round trip that may commit, while the cutter waits to see how it ended. */
    let watched: RoundTrip | null = null;
    /** The server's answers to `watched`, held until its ReadyForQuery says how it ended. */
    let answers: Buffer[] = [];
    let failed = false;
    let hold: Hold | null = null;
    /** Runs `deliver` now, or on release while this connection's answers are held. */
    const fromServer = (deliver: () => void) => {
      if (hold !== null && !hold.released) hold.held.push(deliver);
      else deliver();
    };
    const sent = (trip: RoundTrip) => {
      if (!trip.commitQuery && !trip.pipelined) return;
      if (armed && watched === null) {
        watched = trip;
        answers = [];
        failed = false;
      }
      if (holdArmed !== null && trip.bytes.includes(holdArmed.withBytes)) {
        hold = holdArmed;
        hold.engaged = true;
        holdArmed = null;
      }
    };
    client.on('data', (chunk: Buffer) => {
      tripBytes.push(chunk);
      // Matched against the round trip so far: the bytes may span chunks. Nothing of the round
      // trip commits: the server never gets the rest of it.
      if (refuse !== null && Buffer.concat(tripBytes).includes(refuse)) {
        refuse = null;
        refusals += 1;
        client.destroy();
        upstream.destroy();
        return;
      }
      readClient(chunk, (type) => {
        if (type === MESSAGE.execute) executes += 1;
        if (type !== MESSAGE.sync && type !== MESSAGE.query) return;
        const bytes = Buffer.concat(tripBytes);
        sent({
          bytes,
          commitQuery: type === MESSAGE.query && bytes.includes(COMMIT_QUERY),
          pipelined: type === MESSAGE.sync && executes > 1,
        });
        tripBytes = [];
        executes = 0;
      });
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => fromServer(() => forward(chunk)));
    const forward = (chunk: Buffer) => {
      // Every chunk is read, watched or not: a message may span chunks.
      let ended: number | null = null;
      readServer(chunk, (type, body) => {
        if (type === MESSAGE.error) failed = true;
        if (type === MESSAGE.readyForQuery) ended = body[0] ?? null;
      });
      if (watched === null) {
        client.write(chunk);
        return;
      }
      answers.push(chunk);
      if (ended === null) return;
      const trip = watched;
      watched = null;
      const held = Buffer.concat(answers);
      const committed =
        !failed && ended === MESSAGE.idle && (!trip.commitQuery || held.includes(COMMIT_COMPLETE));
      if (committed) {
        // The server has committed and said so. Drop the answer and the line.
        armed = false;
        cuts += 1;
        client.destroy();
        upstream.destroy();
        return;
      }
      // Not a commit: a statement failed (nothing to cut), or the round trip ran inside BEGIN
      // and its Sync committed nothing (the cutter waits for the transaction's end).
      if (failed || ended === MESSAGE.idle) armed = false;
      client.write(held);
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
    refuseNext: (withBytes) => void (refuse = Buffer.from(withBytes)),
    refuseNothing: () => void (refuse = null),
    cuts: () => cuts,
    refusals: () => refusals,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
