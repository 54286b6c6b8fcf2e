import type { ClaimMark } from './claim-mark.js';
import type { journalStatements } from './sql-journal-statements.js';
import type { JournalQuery } from './sql-journal-store.js';

/**
 * When the next pending intent is due (or its lease ends): what an idle worker sleeps until.
 * With a claim mark (PostgreSQL) it reads from the mark, past the settled rows behind it that a
 * held-back VACUUM leaves in the index, and from the start only when nothing is pending there. A
 * row found below the mark makes the next claim read from the start: a worker told it is due
 * would otherwise claim nothing, and ask again, until the full scan came round.
 */
export async function nextDueAt(
  query: JournalQuery,
  sql: ReturnType<typeof journalStatements>,
  mark: ClaimMark | undefined,
): Promise<number | undefined> {
  if (mark === undefined) {
    const at = (await query(sql.nextDue)).rows[0]?.['at'];
    return at === null || at === undefined ? undefined : Number(at);
  }
  const from = mark.position();
  const row = (await query(sql.nextDueFrom, [from.at, from.seq])).rows[0] ?? {};
  const [ahead, at] = [row['ahead'], row['at']];
  if (ahead !== null && ahead !== undefined) return Number(ahead);
  if (at === null || at === undefined) return undefined;
  mark.scanAllNext();
  return Number(at);
}
