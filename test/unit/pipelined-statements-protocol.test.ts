import { describe, expect, it } from 'vitest';
import {
  PipelinedStatements,
  SkippedStatementError,
} from '../../lib/db/pipelined-statements.ts';

/**
 * The messages of one round trip, fed by hand: what PostgreSQL answers decides what each
 * statement's promise settles to. Paths a live server does not take on demand (a ReadyForQuery
 * before every statement was answered) are driven here.
 */
const TWO = [
  { text: 'SELECT 1', values: [] },
  { text: 'SELECT 2', values: [] },
];
const unnamed = () => 'unused';
const settled = (p: PipelinedStatements) => Promise.allSettled(p.results);

describe('a pipelined round trip, read message by message', () => {
  it('answers every statement when ReadyForQuery follows the last answer', async () => {
    const round = new PipelinedStatements(TWO, unnamed);
    round.handleCommandComplete({ text: 'SELECT 1' });
    round.handleCommandComplete({ text: 'SELECT 1' });
    round.handleReadyForQuery();
    const results = await Promise.all(round.results);
    expect(results.map((r) => r.command)).toEqual(['SELECT', 'SELECT']);
  });

  it('fails the statements left unanswered when ReadyForQuery comes early', async () => {
    const round = new PipelinedStatements(TWO, unnamed);
    round.handleCommandComplete({ text: 'SELECT 1' });
    round.handleReadyForQuery();
    const [first, second] = await settled(round);
    expect(first?.status).toBe('fulfilled');
    expect(second?.status).toBe('rejected');
    expect(second?.status === 'rejected' && String(second.reason)).toMatch(
      /ended the round trip without answering/,
    );
  });

  it("keeps a statement's failure, and the skips after it, when ReadyForQuery follows", async () => {
    const round = new PipelinedStatements(TWO, unnamed);
    const failure = new Error('check failed');
    round.handleError(failure);
    round.handleReadyForQuery();
    const [first, second] = await settled(round);
    expect(first?.status === 'rejected' && first.reason).toBe(failure);
    expect(second?.status === 'rejected' && second.reason).toBeInstanceOf(SkippedStatementError);
  });
});
