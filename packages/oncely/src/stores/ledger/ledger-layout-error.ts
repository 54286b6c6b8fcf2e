import { OncelyError } from '../../contract/errors.js';

/**
 * The ledger table on disk predates the current layout (fingerprints as bytes, tombstones in a
 * table of their own; on PostgreSQL, receipts partitioned by time). Refused at start rather than
 * answering replays with 422 conflicts (a text fingerprint read back would never match the
 * request's) or claiming keys without the partitioned table's claim. `oncely ledger migrate`
 * (ledger-migration.ts) carries its rows over to the current layout.
 */
export class LedgerLayoutError extends OncelyError {
  constructor(store: string, table: string, why = 'stores fingerprints as text') {
    super(
      'ledger_layout',
      `${store} ledger table ${table} ${why}: it was made by an earlier oncely; run \`npx oncely ledger migrate\` (migrateSqliteLedger or migratePostgresLedger in code) to carry its receipts over to the current layout`,
    );
    this.name = 'LedgerLayoutError';
  }
}
