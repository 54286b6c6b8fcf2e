import type { LedgerEntry } from '../../../ledger/ledger-entry.js';
import { LEDGER_COLUMNS, entryValues } from '../ledger-row.js';
import { LEDGER_COLUMN_TYPES } from './postgres-ledger-columns.js';
import { qualified, type PostgresLedgerTables } from './postgres-tombstones.js';

/**
 * The claim on a receipts table partitioned by time, for a batch of entries at once (the claims
 * of concurrent requests, postgres-claim-batch.ts). A partitioned table's unique key must include
 * the partition column, so (scope, key) alone cannot be a primary key: the key is unique per
 * partition only, and claims keep it unique across partitions by taking turns per key. The
 * function (PL/pgSQL, created with the table):
 * 1. runs in a statement that makes its transaction commit asynchronously, like every
 *    bookkeeping write (docs/durability.md);
 * 2. takes a transaction-level advisory lock on a hash of (ledger, scope, key) for every entry,
 *    all in one statement and in the order of their hashes, so two batches that share keys never
 *    wait on each other in a cycle: a second claim of a key waits here until the transaction of
 *    the first one has committed;
 * 3. for each entry in turn, reads the key in every partition, with a snapshot taken after the
 *    locks (each statement of a volatile PL/pgSQL function takes a fresh one at READ COMMITTED),
 *    so it sees a row a claim before it committed, or one an earlier entry of the same batch
 *    inserted, and answers that row. Newest partition first (ORDER BY first_seen_at DESC: an
 *    ordered scan of the partitions, backwards on each primary key): a retry of a recent request
 *    is found in the current partition without descending the older partitions' indexes;
 * 4. else inserts the entry's row: it won, and answers nothing.
 * One round trip, one statement and one commit for the whole batch. Each entry's statements have
 * only scalar parameters, so PostgreSQL plans them once per connection; a set-based INSERT over
 * unnest() was planned again at every call (its row estimate comes from the arrays' lengths), at
 * twice the cost. A hash collision between two keys only makes their claims take turns. A
 * takeover or a release changes a row that exists already, matched on its owner token; it needs
 * no lock.
 */
export function postgresClaimFunction(tables: PostgresLedgerTables): {
  readonly name: string;
  readonly ddl: string;
  /**
   * The call: parameter $i (1 … 13) is the array of every entry's value of column i, in
   * LEDGER_COLUMNS order. One row per entry that found a row already: `i` (its 1-based place in
   * the arrays) and the row found.
   */
  readonly call: string;
  /** The function's arguments as the call passes them ($1 … $13, each cast to its array type). */
  readonly args: string;
} {
  const name = qualified(tables, `${tables.liveName}_claims`);
  const types = LEDGER_COLUMN_TYPES;
  const params = LEDGER_COLUMNS.map((c) => `p_${c} ${types[c]}[]`).join(', ');
  const out = LEDGER_COLUMNS.map((c) => `${c} ${types[c]}`).join(', ');
  const found = LEDGER_COLUMNS.map((c) => `t.${c}`).join(', ');
  const ddl = `CREATE OR REPLACE FUNCTION ${name}(${params})
    RETURNS TABLE (i integer, ${out}) LANGUAGE plpgsql VOLATILE AS $fn$
    #variable_conflict use_column
    DECLARE j integer;
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtext(${literal(tables.live)}), h)
        FROM (SELECT DISTINCT hashtext(s || chr(31) || k) AS h FROM unnest(p_scope, p_key) AS u(s, k) ORDER BY 1) AS locks;
      FOR j IN 1 .. cardinality(p_key) LOOP
        RETURN QUERY SELECT j, ${found} FROM ${tables.live} t WHERE t.scope = p_scope[j] AND t.key = p_key[j] ORDER BY t.first_seen_at DESC LIMIT 1;
        IF NOT FOUND THEN
          INSERT INTO ${tables.live} (${LEDGER_COLUMNS.join(', ')}) VALUES (${LEDGER_COLUMNS.map((c) => `p_${c}[j]`).join(', ')});
        END IF;
      END LOOP;
    END $fn$`;
  const args = LEDGER_COLUMNS.map((c, i) => `$${i + 1}::${types[c]}[]`).join(', ');
  // The async setting rides in the statement itself (LATERAL: set before the function runs).
  const call = `SELECT c.* FROM (SELECT set_config('synchronous_commit', 'off', true)) AS oncely_async_commit CROSS JOIN LATERAL ${name}(${args}) AS c`;
  return { name, ddl, call, args };
}

/** The claim function's parameters for `entries`: array i holds every entry's value of column i. */
export function columnArrays(entries: readonly LedgerEntry[]): unknown[][] {
  const rows = entries.map(entryValues);
  return LEDGER_COLUMNS.map((_, c) => rows.map((row) => row[c]));
}

/** A string literal for DDL text (our own identifiers only: no quote can be in them). */
function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
