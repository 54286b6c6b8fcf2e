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
    (a) => `  attempt ${a.attempt} at ${relative(a.startedAt)}: ${a.outcome}${a.detail ? ` (${a.detail})` : ''}`,
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
  ];
}
