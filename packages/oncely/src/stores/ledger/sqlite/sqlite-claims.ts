import type { ClaimAttempt } from '../../../ledger/ledger-store.js';
import type { CompletedEntry, EntryVersion, InFlightEntry } from '../../../ledger/ledger-entry.js';
import { COMPLETE_COLUMNS, LEDGER_COLUMNS, completeValues } from '../ledger-row.js';
import type { GroupCommit } from './group-commit.js';
import type { PendingClaims } from './pending-claims.js';
import type { SqliteStatement } from '../../sqlite-driver/sqlite-database.js';
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
export function claimInOpenBatch(entry: InFlightEntry, parts: ClaimParts): Promise<ClaimAttempt> {
  const { group, claims, onWriter, sql } = parts;
  const lookAndClaim = (): boolean => {
    if (claims.unwritten(entry.scope, entry.key) !== undefined) return false;
    if (claims.receiptPending(entry.scope, entry.key)) return false;
    if (onWriter(sql.exists).get(entry.scope, entry.key) !== undefined) return false;
    claims.add(entry, group.openBatch!);
    return true;
  };
  // This process holds the write lock and the writer is free: the look under the lock costs no
  // wait, so it is the only one (no promise made on the way when the key is new).
  const now = group.writeNow(lookAndClaim);
  if (now === true) return WON;
  if (now === false) return notWon(entry, parts);
  return claimWaiting(entry, parts, lookAndClaim);
}

const WON: Promise<ClaimAttempt> = Promise.resolve(Object.freeze({ won: true }));

/** The claim when the writer is busy or no batch is open: committed rows first, then the lock. */
async function claimWaiting(
  entry: InFlightEntry,
  parts: ClaimParts,
  lookAndClaim: () => boolean,
): Promise<ClaimAttempt> {
  // Committed rows first (on the reader, or on the writer while it is idle): a replay or a
  // duplicate never waits for a write. The live table only: a tombstone would only be taken
  // over (decide-claim.ts: the key is new again).
  const seen = await parts.reads.readEntry(entry.scope, entry.key, { liveOnly: true });
  if (seen) return { won: false, existing: seen };
  if (await parts.group.write(lookAndClaim, false)) return { won: true };
  return notWon(entry, parts);
}

/** The entry that holds the key this claim did not win. */
async function notWon(
  { scope, key }: InFlightEntry,
  { claims, reads, group }: ClaimParts,
): Promise<ClaimAttempt> {
  // Claimed by this process: told to come back. A row: as committed (the reader), else as the
  // writer sees it (a claim of the open batch is one; a receipt only once committed).
  const pending = claims.unwritten(scope, key);
  if (pending !== undefined) return { won: false, existing: pending };
  // A receipt written with the open batch: answered once that batch has committed.
  if (claims.receiptPending(scope, key)) await group.settled();
  const committed = await reads.readEntry(scope, key, { liveOnly: true });
  if (committed) return { won: false, existing: committed };
  return { won: false, existing: await reads.readEntry(scope, key, { onWriter: true }) };
}

/**
 * The statement that writes a receipt whose claim was written as an in-flight row: an UPDATE of
 * that row; none when the claim was lost with a rolled-back batch. (A claim never written keeps
 * its receipt with the batch: pending-claims.ts.)
 */
export function receiptWrite(
  sql: LedgerStatements,
  how: 'update' | 'lost',
  expected: EntryVersion,
  next: CompletedEntry,
): { readonly source: string; readonly params: unknown[] } | undefined {
  if (how === 'lost') return undefined;
  return { source: sql.complete, params: [...completeValues(next), ...versionParams(expected)] };
}
