import { LEDGER_COLUMNS } from '../ledger-row.js';
import { LEDGER_COLUMN_TYPES } from './postgres-ledger-columns.js';
import { qualified, type PostgresLedgerTables } from './postgres-tombstones.js';

/**
 * The claim on a receipts table partitioned by time. A partitioned table's unique key must include
 * the partition column, so (scope, key) alone cannot be a primary key: the key is unique per
 * partition only, and claims keep it unique across partitions by taking turns per key. The
 * function (PL/pgSQL, created with the table):
 * 1. makes its statement's transaction commit asynchronously, like every bookkeeping write
 *    (docs/durability.md);
 * 2. takes a transaction-level advisory lock on a hash of (ledger, scope, key): a second claim of
 *    the same key waits here until the first one's transaction has committed;
 * 3. reads the key in every partition, with a snapshot taken after the lock (each statement of a
 *    volatile PL/pgSQL function takes a fresh one at READ COMMITTED), so it sees a row the claim
 *    before it committed, and answers that row;
 * 4. else inserts the in-flight row, and says it won.
 * All in one round trip, as the single-statement INSERT ... ON CONFLICT was. A hash collision
 * between two keys only makes their claims take turns. A takeover or a release changes a row
 * that exists already, matched on its owner token; it needs no lock.
 */
export function postgresClaimFunction(tables: PostgresLedgerTables): {
  readonly name: string;
  readonly ddl: string;
  /** The call: parameters $1 … $13 in LEDGER_COLUMNS order; one row, `won` and the row found. */
  readonly call: string;
} {
  const name = qualified(tables, `${tables.liveName}_claim`);
  const types = LEDGER_COLUMN_TYPES;
  const params = LEDGER_COLUMNS.map((c) => `p_${c} ${types[c]}`).join(', ');
  const out = LEDGER_COLUMNS.map((c) => `${c} ${types[c]}`).join(', ');
  const found = LEDGER_COLUMNS.map((c) => `t.${c}`).join(', ');
  const nulls = LEDGER_COLUMNS.map((c) => `NULL::${types[c]}`).join(', ');
  const ddl = `CREATE OR REPLACE FUNCTION ${name}(${params})
    RETURNS TABLE (won boolean, ${out}) LANGUAGE plpgsql VOLATILE AS $fn$
    #variable_conflict use_column
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtext(${literal(tables.live)}), hashtext(p_scope || chr(31) || p_key));
      RETURN QUERY SELECT false, ${found} FROM ${tables.live} t WHERE t.scope = p_scope AND t.key = p_key LIMIT 1;
      IF FOUND THEN RETURN; END IF;
      INSERT INTO ${tables.live} (${LEDGER_COLUMNS.join(', ')}) VALUES (${LEDGER_COLUMNS.map((c) => `p_${c}`).join(', ')});
      RETURN QUERY SELECT true, ${nulls};
    END $fn$`;
  const args = LEDGER_COLUMNS.map((c, i) => `$${i + 1}::${types[c]}`).join(', ');
  // The async setting rides in the statement itself (LATERAL: set before the function runs).
  const call = `SELECT c.* FROM (SELECT set_config('synchronous_commit', 'off', true)) AS oncely_async_commit CROSS JOIN LATERAL ${name}(${args}) AS c`;
  return { name, ddl, call };
}

/** A string literal for DDL text (our own identifiers only: no quote can be in them). */
function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
