import { LEDGER_COLUMNS } from '../ledger-row.js';
import { LEDGER_COLUMN_TYPES } from './postgres-ledger-columns.js';
import { qualified, type PostgresLedgerTables } from './postgres-tombstones.js';

/** The columns that name the in-flight row a receipt replaces (its owner's version). */
const VERSION = ['scope', 'key', 'token', 'state'] as const;

/**
 * The receipt as a PL/pgSQL function, for ledgers whose statements cannot be prepared (an ORM's
 * raw statements go unnamed): PostgreSQL parses and plans an unnamed UPDATE of the partitioned
 * receipts table at every call (about 140 µs of the backend's CPU), while a function's
 * statements are planned once per connection. The pg store prepares the statement itself
 * (postgres-statements.ts, `receipt`) and does not call it. It returns 1 when it replaced the
 * in-flight row, 0 when another worker owns the key now.
 */
export function postgresReceiptFunction(tables: PostgresLedgerTables): {
  readonly ddl: string;
  /** The call with `commitLevel` (the commit's level, set in the same statement): $1 … $13 the row, $14 … $17 the version replaced. */
  call(commitLevel: string): string;
} {
  const name = qualified(tables, `${tables.liveName}_receipt`);
  const types = LEDGER_COLUMN_TYPES;
  const params = [
    ...LEDGER_COLUMNS.map((c) => `p_${c} ${types[c]}`),
    ...VERSION.map((c) => `v_${c} ${types[c]}`),
  ].join(', ');
  const set = LEDGER_COLUMNS.map((c) => `${c} = p_${c}`).join(', ');
  const where = VERSION.map((c) => `${c} = v_${c}`).join(' AND ');
  const ddl = `CREATE OR REPLACE FUNCTION ${name}(${params})
    RETURNS integer LANGUAGE plpgsql VOLATILE AS $fn$
    DECLARE n integer;
    BEGIN
      UPDATE ${tables.live} SET ${set} WHERE ${where};
      GET DIAGNOSTICS n = ROW_COUNT;
      RETURN n;
    END $fn$`;
  const args = [...LEDGER_COLUMNS, ...VERSION].map((c, i) => `$${i + 1}::${types[c]}`).join(', ');
  return {
    ddl,
    call: (commitLevel) => `SELECT ${name}(${args}) AS completed, (${commitLevel}) AS commit_level`,
  };
}
