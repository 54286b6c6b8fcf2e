import type { DropboxFixtures } from './dropbox-fixtures.js';
import { pythonRepr } from './python-repr.js';

/** The dropbox story's (docs/origins.md) "Expected output" for A–C, line for line, then fixture D in the same style. */
export function dropboxPrintout(f: DropboxFixtures): string[] {
  const relative = (at: number): string => {
    const s = (at - f.D.closesAt) / 1000;
    return s === 0 ? 'closes_at' : `closes_at${s > 0 ? '+' : ''}${s}s`;
  };
  const d = f.D;
  const attemptLines = d.report.attempts.map(
    (a) =>
      `  attempt ${a.attempt} at ${relative(a.startedAt)}: ${a.outcome}${a.detail ? ` (${a.detail})` : ''}`,
  );
  const lastEnded = d.report.attempts.at(-1)?.endedAt ?? d.closesAt;
  return [
    '=== fixture A: naive retry after a swallowed ack ===',
    `events: ${pythonRepr(f.A.events)}`,
    `store: ${pythonRepr(f.A.store)}`,
    '=== fixture B: same key, same budget ===',
    `events: ${pythonRepr(f.B.events)}`,
    `store: ${pythonRepr(f.B.store)}`,
    '=== fixture C: error input, empty key ===',
    `caught: ${f.C.caught}`,
    '=== fixture D: swallowed ack at closes_at - 1, next attempt due at closes_at + 1 ===',
    ...attemptLines,
    `  next attempt would start at ${relative(lastEnded + d.retryDelayMs)}: past the deadline, so none is made`,
    `events: ${pythonRepr(d.events)}`,
    `outcome: ${d.report.outcome} (the first submission may have happened; it is never reported as rejected)`,
    `store: ${pythonRepr(d.store)}`,
    `lookup at ${relative(d.lookupAt)}: ${pythonRepr(d.lookup)}`,
    ...dropboxSummary(f),
  ];
}

/**
 * The same facts in words, beside the Python reprs (which stay byte-identical to the story's
 * expected output): how many submissions were sent, how many rows and writes they left.
 */
export function dropboxSummary(f: DropboxFixtures): string[] {
  const sent = (events: readonly string[]): number =>
    events.filter((e) => !e.startsWith('stop:')).length;
  const writes = (rows: DropboxFixtures['A']['store']): number =>
    rows.reduce((sum, row) => sum + row.writes, 0);
  const row = (
    name: string,
    events: readonly string[],
    rows: DropboxFixtures['A']['store'],
    verdict: string,
  ): string =>
    `  ${name.padEnd(33)}${String(sent(events)).padEnd(6)}${String(rows.length).padEnd(6)}${String(writes(rows)).padEnd(8)}${verdict}`;
  return [
    '',
    `summary                            ${'sent'.padEnd(6)}${'rows'.padEnd(6)}${'writes'.padEnd(8)}what it means`,
    row(
      'A naive retry (a new key)',
      f.A.events,
      f.A.store,
      f.A.store.length > 1 ? 'one intent, two rows: the retry was a second submission' : 'one row',
    ),
    row(
      'B retry under the same key',
      f.B.events,
      f.B.store,
      f.B.store.length === 1
        ? 'one intent, one row: the retry was answered from the first'
        : 'duplicate rows',
    ),
    `  ${'C an empty key'.padEnd(33)}${'0'.padEnd(6)}${'-'.padEnd(6)}${'-'.padEnd(8)}refused before anything was sent: ${f.C.caught}`,
    row(
      'D swallowed ack at the deadline',
      f.D.events,
      f.D.store,
      `outcome ${f.D.report.outcome}: no retry after the close; the lookup ${f.D.lookup ? 'finds the row' : 'finds nothing'}`,
    ),
  ];
}
