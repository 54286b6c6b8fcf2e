import { LEDGER_COLUMNS } from '../ledger-row.js';
import { postgresClaimFunction } from './postgres-claim.js';
import { LEDGER_COLUMN_TYPES } from './postgres-ledger-columns.js';
import { qualified, type PostgresLedgerTables } from './postgres-tombstones.js';

/**
 * The deferred commit's row inside a transaction the effect ran in (an ORM's, whose statements go
 * unnamed): a PL/pgSQL function with one scalar parameter per column that calls the batch claim
 * (postgres-claim.ts) with one-element arrays, as the pg store's deferred commit does for its
 * members (postgres-deferred.ts): it takes the key's advisory lock (the one claims take, so a
 * claim of the key and this row take turns), reads the key with a snapshot taken after the lock,
 * and inserts the completed row when it found none. It returns 1 when the key had a row (nothing
 * inserted: the caller rolls back), 0 when the row went in. Unlike the claim of one entry
 * (postgres-single-claim.ts) it leaves the commit's level to the call, since this commit is the
 * effect's own.
 *
 * The read after the lock sees a row committed meanwhile only at READ COMMITTED, where each
 * statement takes a fresh snapshot; at REPEATABLE READ or SERIALIZABLE the transaction's snapshot
 * would miss it and the key could be answered twice, so the function refuses to run there.
 */
export function postgresDeferredFunction(tables: PostgresLedgerTables): {
  readonly ddl: string;
  /** The call with `commitLevel` set in the same statement: $1 … $13 the completed row; `found` 0 or 1. */
  call(commitLevel: string): string;
} {
  const name = qualified(tables, `${tables.liveName}_deferred_one`);
  const types = LEDGER_COLUMN_TYPES;
  const params = LEDGER_COLUMNS.map((c) => `p_${c} ${types[c]}`).join(', ');
  const arrays = LEDGER_COLUMNS.map((c) => `ARRAY[p_${c}]`).join(', ');
  const ddl = `CREATE OR REPLACE FUNCTION ${name}(${params})
    RETURNS integer LANGUAGE plpgsql VOLATILE AS $fn$
    DECLARE n integer;
    BEGIN
      IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'oncely: a deferred route''s transaction must run at READ COMMITTED, not %', current_setting('transaction_isolation')
          USING ERRCODE = 'feature_not_supported';
      END IF;
      SELECT count(*) INTO n FROM ${postgresClaimFunction(tables).name}(${arrays});
      RETURN n;
    END $fn$`;
  const args = LEDGER_COLUMNS.map((c, i) => `$${i + 1}::${types[c]}`).join(', ');
  return {
    ddl,
    call: (commitLevel) => `SELECT ${name}(${args}) AS found, (${commitLevel}) AS commit_level`,
  };
}
