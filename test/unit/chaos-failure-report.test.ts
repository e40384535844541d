import { describe, expect, it } from 'vitest';
import { collapseSessionEnds } from '../chaos/formation-evidence.ts';
import { failureSummary } from '../chaos/report.ts';
import { Findings } from '../chaos/verdict.ts';

/**
 * CI shows only the tail of a failed chaos run. These tests hold the tail to naming what broke:
 * the summary names each broken invariant, and runs of ended sessions in the servers' logs do
 * not crowd the rest out.
 */
describe('a failed chaos run’s last lines', () => {
  it('name each broken invariant, with its count and its first violation', () => {
    const findings = new Findings();
    findings.add('acknowledged', 'op 612: answer SUCCEEDED for key k-612, key missing');
    findings.add('acknowledged', 'op 613: answer SUCCEEDED for key k-613, key missing');
    findings.add('unfinished', 'key k-700 left in unknown');

    expect(failureSummary(findings)).toEqual([
      '  ✗ acknowledged (2): op 612: answer SUCCEEDED for key k-612, key missing',
      '  ✗ unfinished (1): key k-700 left in unknown',
    ]);
  });

  it('say nothing of invariants that held', () => {
    expect(failureSummary(new Findings())).toEqual([]);
  });

  it('fold a run of ended sessions into one line with its count and span, and keep a commit left alone', () => {
    const ended = (at: string, pid: number) =>
      `2026-12-08 00:00:${at} UTC [${pid}] FATAL:  terminating connection due to administrator command`;
    const promoted = '2026-12-08 00:00:02.500 UTC [200] LOG:  received promote request';
    const leftAlone =
      '2026-12-08 00:00:03.000 UTC [5] WARNING:  canceling the wait for synchronous replication and terminating connection due to administrator command';

    expect(
      collapseSessionEnds([
        ended('01.103', 1),
        ended('01.107', 2),
        ended('01.169', 3),
        promoted,
        leftAlone,
        ended('03.001', 4),
      ]),
    ).toEqual([
      '2026-12-08 00:00:01.103 UTC … 2026-12-08 00:00:01.169 UTC: 3 sessions ended by an administrator command',
      promoted,
      leftAlone,
      ended('03.001', 4),
    ]);
  });
});
