import type { ExpiredEntry, LedgerEntry } from '../../ledger/ledger-entry.js';
import { OncelyError } from '../../contract/errors.js';
import { LEDGER_COLUMNS, rowToEntry, type LedgerRow } from './ledger-row.js';

/** What `migrate…Ledger` found and did. */
export interface LedgerMigration {
  /** The ledger table, as SQL names it. */
  readonly table: string;
  /**
   * 'missing': no such table, nothing done; 'current': already this oncely's layout, nothing
   * done; 'earlier': made by an earlier oncely, now carried over to the current layout.
   */
  readonly found: 'missing' | 'current' | 'earlier';
  /** Receipts and claims carried over (in flight or completed). */
  readonly receipts: number;
  /** Rows that were tombstones ("expired") in the earlier table, now in the tombstone table. */
  readonly tombstones: number;
}

/** Told after each batch of rows: how many are carried over, of how many. */
export type MigrationProgress = (done: number, total: number) => void;

/** Rows read and written per batch. */
export const MIGRATION_BATCH_ROWS = 5000;

/** A migration refused: the table or one of its rows is not what an earlier oncely wrote. */
export class LedgerMigrationError extends OncelyError {
  constructor(table: string, why: string, options?: { cause?: unknown }) {
    super(
      'ledger_migration',
      `cannot migrate ledger table ${table}: ${why}; nothing was changed`,
      options,
    );
    this.name = 'LedgerMigrationError';
  }
}

/** The columns the earlier layouts had and the migration reads; one missing refuses the table. */
export function missingLedgerColumns(present: readonly string[]): string[] {
  return LEDGER_COLUMNS.filter((c) => !present.includes(c));
}

const instant = (n: number | undefined): boolean => n === undefined || Number.isSafeInteger(n);

/**
 * A row of an earlier table read with the current codec (which reads text fingerprints and JSON
 * headers as well as today's bytes and lines), checked so that what is written back is an entry
 * the ledger can answer from: a row that is not is an error naming its key.
 */
export function entryOfEarlierRow(
  table: string,
  row: LedgerRow,
): { live: LedgerEntry } | { tombstone: ExpiredEntry } {
  const which = `the row of scope ${JSON.stringify(row.scope)}, key ${JSON.stringify(row.key)}`;
  let entry: LedgerEntry;
  try {
    entry = rowToEntry(row);
  } catch (cause) {
    throw new LedgerMigrationError(
      table,
      `${which} cannot be read (${cause instanceof Error ? cause.message : String(cause)})`,
      { cause },
    );
  }
  const bad = (what: string): never => {
    throw new LedgerMigrationError(table, `${which} has ${what}`);
  };
  if (typeof row.token !== 'string' || row.token === '') bad('no owner token');
  if (!instant(entry.firstSeenAt) || !instant(entry.expiresAt))
    bad('no first_seen_at or expires_at');
  switch (entry.state) {
    case 'in_flight':
      if (!Number.isSafeInteger(entry.leaseExpiresAt)) bad('no lease_expires_at (in flight)');
      return { live: entry };
    case 'completed':
      if (!Number.isSafeInteger(entry.completedAt)) bad('no completed_at (completed)');
      if (
        !Number.isInteger(entry.receipt.status) ||
        entry.receipt.status < 100 ||
        entry.receipt.status > 599
      )
        bad(`status ${String(row.status)} (completed)`);
      if (row.body === null || row.body === undefined) bad('no body (completed)');
      if (typeof row.headers !== 'string') bad('no headers (completed)');
      return { live: entry };
    case 'expired':
      if (!Number.isSafeInteger(entry.expiredAt) || !instant(entry.completedAt))
        bad('no expired_at (expired)');
      return { tombstone: entry };
  }
}
