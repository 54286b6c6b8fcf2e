import { LEDGER_COLUMNS } from '../ledger-row.js';
import { postgresClaimFunction } from './postgres-claim.js';
import { LEDGER_COLUMN_TYPES } from './postgres-ledger-columns.js';
import { qualified, type PostgresLedgerTables } from './postgres-tombstones.js';

/**
 * The claim of one entry, for ledgers whose statements cannot be prepared (an ORM's raw
 * statements go unnamed): a PL/pgSQL function with one scalar parameter per column that makes
 * its statement's transaction commit asynchronously and calls the batch claim
 * (postgres-claim.ts) with one-element arrays. Unnamed, the batch claim's call with its array
 * constructors and the async-commit subquery was parsed and planned at every request (about
 * 190 µs of the backend's CPU, 105 µs prepared); this call, about 150 µs: the statements inside
 * are planned once per connection. Scalar parameters suit every ORM (Knex expands a JS array
 * into a list). The pg store calls the batch claim itself, prepared.
 */
export function postgresSingleClaimFunction(tables: PostgresLedgerTables): {
  readonly ddl: string;
  /** $1 … $13: the entry's value of each column, in LEDGER_COLUMNS order; a row when the key has one. */
  readonly call: string;
} {
  const name = qualified(tables, `${tables.liveName}_claim_one`);
  const types = LEDGER_COLUMN_TYPES;
  const params = LEDGER_COLUMNS.map((c) => `p_${c} ${types[c]}`).join(', ');
  const out = LEDGER_COLUMNS.map((c) => `${c} ${types[c]}`).join(', ');
  const arrays = LEDGER_COLUMNS.map((c) => `ARRAY[p_${c}]`).join(', ');
  const ddl = `CREATE OR REPLACE FUNCTION ${name}(${params})
    RETURNS TABLE (i integer, ${out}) LANGUAGE plpgsql VOLATILE AS $fn$
    BEGIN
      PERFORM set_config('synchronous_commit', 'off', true);
      RETURN QUERY SELECT * FROM ${postgresClaimFunction(tables).name}(${arrays});
    END $fn$`;
  const args = LEDGER_COLUMNS.map((c, i) => `$${i + 1}::${types[c]}`).join(', ');
  return { ddl, call: `SELECT * FROM ${name}(${args})` };
}
