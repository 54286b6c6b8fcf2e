import type { JournalStore } from '../../../journal/journal-store.js';
import type { JournalQuery } from '../sql/sql-journal-store.js';

/**
 * Statistics for a journal table the planner has never seen analyzed. Without any (a table made
 * minutes ago, before autovacuum's first ANALYZE, or analyzed while still empty), PostgreSQL
 * guesses a pending, unleased row is rare and plans the claim as a bitmap scan of every pending
 * row and a sort, then takes a batch: a 32-intent claim over a 2,000-intent backlog read all
 * 2,000 rows (about 1 ms a claim; a claim of 32 costs 0.1 ms walking the index in order), and
 * that grows with the backlog. With statistics, even ones that saw no row pending, the plan is
 * the ordered walk of the claim's index that stops at the batch.
 *
 * So the first claim that comes back full (a backlog) asks whether the planner has statistics of
 * the table's `state` column and, if not, runs ANALYZE on it, once for the store: milliseconds
 * on a young table; the cached plans are replanned. A failure (no right to analyze) only leaves
 * the table as it was, for autovacuum to analyze.
 */
export function withStatsForBacklog<Tx>(
  store: JournalStore<Tx>,
  query: JournalQuery,
  intents: string,
): JournalStore<Tx> {
  const claimStarting = store.capabilities.claimStarting;
  if (claimStarting === undefined) return store;
  let looked: Promise<void> | undefined;
  const lookOnce = (): Promise<void> =>
    (looked ??= analyzeIfBlind(query, intents).catch(() => undefined));
  return {
    ...store,
    capabilities: {
      ...store.capabilities,
      claimStarting: {
        ...claimStarting,
        async claim(...args) {
          const claimed = await claimStarting.claim(...args);
          if (looked === undefined && claimed.length > 0 && claimed.length === args[3])
            await lookOnce();
          return claimed;
        },
      },
    },
  };
}

async function analyzeIfBlind(query: JournalQuery, intents: string): Promise<void> {
  const { rows } = await query(
    `SELECT EXISTS (SELECT 1 FROM pg_stats AS s JOIN pg_class AS c ON c.relname = s.tablename JOIN pg_namespace AS n ON n.oid = c.relnamespace AND n.nspname = s.schemaname WHERE c.oid = $1::regclass AND s.attname = 'state') AS known`,
    [intents],
  );
  if (rows[0]?.['known'] !== true) await query(`ANALYZE ${intents}`);
}
