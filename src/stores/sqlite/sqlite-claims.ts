import type { ClaimAttempt } from '../../ledger/ledger-store.js';
import type { CompletedEntry, EntryVersion, InFlightEntry } from '../../ledger/ledger-entry.js';
import { COMPLETE_COLUMNS, LEDGER_COLUMNS, completeValues, entryValues } from '../ledger-row.js';
import type { GroupCommit } from './group-commit.js';
import type { PendingClaims, ReceiptWrite } from './pending-claims.js';
import type { SqliteStatement } from './sqlite-database.js';
import type { SqliteReads } from './sqlite-reads.js';

/** The ledger table's statements. */
export function ledgerStatements(table: string) {
  const where = 'scope = ? AND key = ? AND token = ? AND state = ?';
  return {
    get: `SELECT * FROM ${table} WHERE scope = ? AND key = ?`,
    exists: `SELECT 1 FROM ${table} WHERE scope = ? AND key = ?`,
    insert: `INSERT INTO ${table} (${LEDGER_COLUMNS.join(', ')}) VALUES (${LEDGER_COLUMNS.map(() => '?').join(', ')}) ON CONFLICT (scope, key) DO NOTHING`,
    swap: `UPDATE ${table} SET ${LEDGER_COLUMNS.map((c) => `${c} = ?`).join(', ')} WHERE ${where}`,
    renew: `UPDATE ${table} SET lease_expires_at = ? WHERE ${where}`,
    remove: `DELETE FROM ${table} WHERE ${where}`,
    // The receipt in place of a written in-flight row: only the columns that change. Setting the
    // key columns too (to the same values) made SQLite rewrite the row in the primary key's tree
    // and the expiry index as a delete and an insert.
    complete: `UPDATE ${table} SET ${COMPLETE_COLUMNS.map((c) => `${c} = ?`).join(', ')} WHERE ${where}`,
  };
}

export type LedgerStatements = ReturnType<typeof ledgerStatements>;

export const versionParams = (v: EntryVersion): unknown[] => [v.scope, v.key, v.token, v.state];

export interface ClaimParts {
  readonly group: GroupCommit;
  readonly claims: PendingClaims;
  readonly reads: SqliteReads;
  readonly onWriter: (source: string) => SqliteStatement;
  readonly sql: LedgerStatements;
}

/**
 * Claims a key: won when it has no row and no claim of this process, looked at under the write
 * lock of the open batch; the claim is then kept in memory (pending-claims.ts) and written only
 * if that batch commits before the receipt. Otherwise the entry that is there.
 */
export async function claimKey(
  entry: InFlightEntry,
  { group, claims, reads, onWriter, sql }: ClaimParts,
): Promise<ClaimAttempt> {
  const { scope, key } = entry;
  // Committed rows first (on the reader, or on the writer while it is idle): a replay or a
  // duplicate never waits for a write. Skipped when this process holds the write lock and the
  // writer is free: the look below costs no wait then. The live table only: a tombstone would
  // only be taken over (decide-claim.ts: the key is new again).
  if (!group.writable) {
    const seen = await reads.readEntry(scope, key, { liveOnly: true });
    if (seen) return { won: false, existing: seen };
  }
  const won = await group.write(() => {
    if (claims.unwritten(scope, key) !== undefined) return false;
    if (onWriter(sql.exists).get(scope, key) !== undefined) return false;
    claims.add(entry, group.openBatch!);
    return true;
  }, false);
  if (won) return { won: true };
  // Claimed by this process: told to come back. A row: as committed (the reader), else as the
  // writer sees it (a claim of the open batch is one; a receipt only once committed).
  const pending = claims.unwritten(scope, key);
  if (pending !== undefined) return { won: false, existing: pending };
  const committed = await reads.readEntry(scope, key, { liveOnly: true });
  if (committed) return { won: false, existing: committed };
  return { won: false, existing: await reads.readEntry(scope, key, { onWriter: true }) };
}

/**
 * The statement that writes a receipt, as its claim calls for: the row's first write (its claim
 * was never written), an UPDATE of the in-flight row, or none when the claim was lost with a
 * rolled-back batch.
 */
export function receiptWrite(
  sql: LedgerStatements,
  how: ReceiptWrite,
  expected: EntryVersion,
  next: CompletedEntry,
): { readonly source: string; readonly params: unknown[] } | undefined {
  switch (how) {
    case 'insert':
      return { source: sql.insert, params: entryValues(next) };
    case 'update':
      return {
        source: sql.complete,
        params: [...completeValues(next), ...versionParams(expected)],
      };
    case 'lost':
      return undefined;
  }
}
