import { InvalidOptionError } from '../../../contract/errors.js';
import type { SqlDialect } from '../../../ledger/sql-handle.js';

/** A table name as SQL takes it unquoted: a name, or schema.name. */
const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$/;

/** The statements of the steps' table, written once for both dialects where they agree. */
export interface StepStatements {
  /** Set-up, in order, in one transaction. */
  readonly create: readonly string[];
  /** $1 scope, $2 key, $3 runAt, $4 expiresAt: moves the run's end later. */
  readonly extend: string;
  /** $1 scope, $2 key, $3 runAt: the run's steps by position. */
  readonly select: string;
  /** $1..$8 the record; nothing when the position is taken. */
  readonly insert: string;
  /**
   * $1..$8 the record, nothing returned: a place already taken fails on the primary key. SQLite
   * records a lone step this way (one RETURNING row cost more than the INSERT).
   */
  readonly insertOrFail: string;
  /** `rows` records, 8 parameters each; returns the keys of those written. */
  insertMany(rows: number): string;
  /**
   * $1 scope, $2 key, $3 runAt: deletes the run's steps (its receipt is being written). SQLite
   * only: its one writer's every commit rewrites the pages it touched, and a table of only the
   * runs in flight stays a few hot pages. Undefined on PostgreSQL, where the DELETE would be a
   * round trip and a statement more in every request with steps: the sweep deletes the rows later.
   */
  readonly forget: string | undefined;
  /** $1 nowMs, $2 limit: deletes the oldest due steps. */
  readonly sweep: string;
}

const COLUMNS = 'scope, idem_key, run_at, position, name, result, recorded_at, expires_at';

/** `($1, … $8), ($9, … $16) …` for `rows` records. */
function values(rows: number): string {
  return Array.from(
    { length: rows },
    (_, r) => `(${Array.from({ length: 8 }, (_, c) => `$${r * 8 + c + 1}`).join(', ')})`,
  ).join(', ');
}

/** Checks `table` once, where the option enters. */
export function checkStepTable(table: unknown): string {
  if (typeof table !== 'string' || !TABLE_NAME.test(table))
    throw new InvalidOptionError(
      'table',
      table,
      'a SQL table name (letters, digits, _; schema.name)',
    );
  return table;
}

/**
 * The table: one row per step, named by its run (scope, key, run_at) and its position, so the
 * INSERT of a step another worker recorded first changes nothing. A name is unique in its run
 * by the runner's checks (a name used twice, or recorded at another position, is refused before
 * the step runs), not by an index: one index less on every step's write. On SQLite the table is
 * its primary key (WITHOUT ROWID, as the ledger's): one B-tree less again, and one page less in
 * each commit's WAL. PostgreSQL takes an advisory lock around the set-up: two servers starting
 * together would otherwise race on CREATE TABLE IF NOT EXISTS.
 */
export function stepStatements(dialect: SqlDialect, table: string): StepStatements {
  const int = dialect === 'postgres' ? 'BIGINT' : 'INTEGER';
  const index = `${table.split('.').at(-1)}_expires`;
  const create = [
    `CREATE TABLE IF NOT EXISTS ${table} (
       scope TEXT NOT NULL, idem_key TEXT NOT NULL, run_at ${int} NOT NULL,
       position INTEGER NOT NULL, name TEXT NOT NULL, result TEXT,
       recorded_at ${int} NOT NULL, expires_at ${int} NOT NULL,
       PRIMARY KEY (scope, idem_key, run_at, position))${dialect === 'sqlite' ? ' WITHOUT ROWID' : ''}`,
    `CREATE INDEX IF NOT EXISTS ${index} ON ${table} (expires_at)`,
  ];
  if (dialect === 'postgres')
    create.unshift(`SELECT pg_advisory_xact_lock(hashtext('oncely steps table ${table}'))`);
  const run = 'scope = $1 AND idem_key = $2 AND run_at = $3';
  // Built once per row count: a batch's text is a few kB, and PostgreSQL prepares it by text.
  const insertTexts: string[] = [];
  return {
    create,
    extend: `UPDATE ${table} SET expires_at = $4 WHERE ${run} AND expires_at < $4`,
    select: `SELECT position, name, result, recorded_at, expires_at FROM ${table} WHERE ${run} ORDER BY position`,
    insert: `INSERT INTO ${table} (${COLUMNS}) VALUES ${values(1)} ON CONFLICT DO NOTHING`,
    forget: dialect === 'sqlite' ? `DELETE FROM ${table} WHERE ${run}` : undefined,
    insertOrFail: `INSERT INTO ${table} (${COLUMNS}) VALUES ${values(1)}`,
    insertMany: (rows) =>
      (insertTexts[rows] ??= `INSERT INTO ${table} (${COLUMNS}) VALUES ${values(rows)}
       ON CONFLICT DO NOTHING RETURNING scope, idem_key, run_at, position`),
    sweep: `DELETE FROM ${table} WHERE (scope, idem_key, run_at, position) IN
              (SELECT scope, idem_key, run_at, position FROM ${table}
               WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2)`,
  };
}
