import { OncelyError } from '../contract/errors.js';

/**
 * The ledger table on disk predates the current layout (fingerprints as bytes, tombstones in a
 * table of their own; on PostgreSQL, receipts partitioned by time). Refused at start rather than
 * answering replays with 422 conflicts (a text fingerprint read back would never match the
 * request's) or claiming keys without the partitioned table's claim. docs/performance.md
 * ("scale") says how to move on (drop the table: receipts live for the retention period only).
 */
export class LedgerLayoutError extends OncelyError {
  constructor(store: string, table: string, why = 'stores fingerprints as text') {
    super(
      'ledger_layout',
      `${store} ledger table ${table} ${why}: it was made by an earlier oncely; drop it (or move it aside) and let the store create the current layout`,
    );
    this.name = 'LedgerLayoutError';
  }
}
