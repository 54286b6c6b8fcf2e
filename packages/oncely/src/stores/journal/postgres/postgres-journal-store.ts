import { InvalidOptionError } from '../../../contract/errors.js';
import type { JournalStore } from '../../../journal/journal-store.js';
import type { CarriesSqlHandle, SqlHandle } from '../../../ledger/sql-handle.js';
import { journalDdl } from '../sql/journal-row.js';
import { endpointDdl, INTENT_ENDPOINT_COLUMN } from '../sql/endpoint-row.js';
import { checkIdentifier } from '../../ledger/ledger-row.js';
import { StoreClosedError } from '../../store-errors.js';
import { createSqlJournalStore, type JournalQuery } from '../sql/sql-journal-store.js';
import type { PgPool, PgQueryable } from '../../postgres-driver/pg-pool.js';
import { connectHeard } from '../../postgres-driver/connect-heard.js';
import { postgresJournalWake } from './postgres-journal-wake.js';
import { hashName } from '../../ledger/postgres/postgres-statements.js';
import { preparedByText } from '../../postgres-driver/prepared-by-text.js';
import { withStatsForBacklog } from './postgres-journal-stats.js';

/**
 * Percent of each intents page new rows fill (PostgreSQL's default 100): the rest is room for
 * each row's claimed version beside it. A claim leases a batch of consecutive intents, often
 * every row of a page in one statement, before any old version can be pruned: at 70 about 4 of
 * a page's 10 intents had room (37% of claims HOT in a 3000-intent drain), at 40 all of them
 * (99%), and with VACUUM held back, when nothing is pruned, the reserve is all there is.
 */
const INTENTS_FILLFACTOR = 40;
/** The attempts table's: its rows are written once, closed, and an earlier oncely's closed once. */
const ATTEMPTS_FILLFACTOR = 70;

/** SQLSTATE of "cached plan must not change result type". */
const STALE_PLAN = '0A000';

export interface PostgresJournalStoreOptions {
  /** A `pg` Pool, or a function that makes one on first use (then ended by close()). */
  readonly pool: PgPool | (() => PgPool);
  /** @default 'oncely_intents' (attempts go to `<table>_attempts`) */
  readonly table?: string;
  /** @default undefined (the connection's search_path) */
  readonly schema?: string | undefined;
}

/**
 * The journal on PostgreSQL, for fleets: several workers on one database. A claim picks due rows
 * with FOR UPDATE SKIP LOCKED (rows another worker is claiming are skipped, not waited for) and
 * leases them in the same transaction; every transaction commits synchronously (the server's
 * default), so an intent, an attempt's start and a settlement survive a crash once acknowledged.
 * `recordWithin` takes the application's own client inside its BEGIN: the transactional outbox.
 */
export function createPostgresJournalStore(
  options: PostgresJournalStoreOptions,
): JournalStore<PgQueryable | SqlHandle | CarriesSqlHandle> {
  const { pool: poolOption } = options;
  if (typeof poolOption !== 'function' && typeof poolOption?.connect !== 'function') {
    throw new InvalidOptionError('pool', poolOption, 'a pg Pool or a function returning one');
  }
  const tableName = checkIdentifier('table', options.table ?? 'oncely_intents');
  const schema =
    options.schema === undefined ? undefined : checkIdentifier('schema', options.schema);
  const qualify = (name: string): string =>
    schema === undefined ? `"${name}"` : `"${schema}"."${name}"`;
  let pool: PgPool | undefined;
  let closed = false;
  const thePool = (): PgPool => {
    if (closed) throw new StoreClosedError('postgres');
    return (pool ??= typeof poolOption === 'function' ? poolOption() : poolOption);
  };
  // The store's own statements go prepared (planned once per connection: about 0.4 ms of planning
  // a 32-intent batch otherwise); the app's client in recordWithin gets plain ones.
  // A text whose prepared form a connection refused ("cached plan must not change result type":
  // a `SELECT *` prepared before a column was added) goes plain from then on.
  const unprepared = new Set<string>();
  const on =
    (client: PgQueryable, prepare = false, inTransaction = false): JournalQuery =>
    async (sql, params) => {
      const values = params === undefined ? undefined : [...params];
      let result;
      if (values === undefined || !prepare || unprepared.has(sql))
        result = await client.query(sql, values);
      else {
        try {
          result = await client.query(preparedByText(sql, values));
        } catch (error) {
          if ((error as { code?: unknown }).code !== STALE_PLAN) throw error;
          unprepared.add(sql);
          if (inTransaction) throw error; // the transaction is aborted: its caller tries again
          result = await client.query(sql, values);
        }
      }
      return { rows: result.rows as Record<string, unknown>[], changes: result.rowCount ?? 0 };
    };
  const transaction = async <T>(fn: (query: JournalQuery) => Promise<T>): Promise<T> => {
    const client = await connectHeard(thePool());
    let broken = false;
    try {
      await client.query('BEGIN');
      const result = await fn(on(client, true, true));
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => void (broken = true));
      throw error;
    } finally {
      client.release(broken);
    }
  };

  const store = createSqlJournalStore<PgQueryable>({
    name: 'postgres',
    intents: qualify(tableName),
    attempts: qualify(`${tableName}_attempts`),
    endpoints: qualify(`${tableName}_endpoints`),
    ddl: postgresJournalDdl(qualify, tableName),
    // Our own identifiers only (checkIdentifier): no quote can be in the literal.
    orderingLock: `SELECT pg_advisory_xact_lock(hashtext('oncely-order:${qualify(tableName)}'), hashtext($1))`,
    nextSeq: `nextval(pg_get_serial_sequence('${qualify(tableName)}', 'seq'))`,
    lockClause: ' FOR UPDATE SKIP LOCKED',
    rowLockClause: ' FOR UPDATE',
    jsonRows: (param, columns) =>
      `json_to_recordset(${param}::json) AS s(${columns.map((c) => `${c.name} ${c.type}`).join(', ')})`,
    writableCte: true,
    lateralLookup: true,
    returningKey: 'i.key AS key',
    fromHex: (expression) => `decode(${expression}, 'hex')`,
    setup: (ddl) =>
      transaction(async (query) => {
        // Two processes starting together would race on CREATE TABLE IF NOT EXISTS.
        await query('SELECT pg_advisory_xact_lock(hashtext($1))', [`oncely:${qualify(tableName)}`]);
        if (schema !== undefined) await query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
        for (const statement of ddl.split(';').filter((s) => s.trim() !== ''))
          await query(statement);
      }),
    query: (sql, params) => on(thePool(), true)(sql, params),
    transaction,
    within: on,
    // One channel per journal table: a worker hears its own journal's intents only.
    // PostgreSQL truncates channel names past 63 bytes and pg_notify refuses them: a hash fits.
    wake: postgresJournalWake(thePool, `oncely_journal_${hashName(qualify(tableName))}`),
    async close() {
      if (closed) return;
      closed = true;
      if (typeof poolOption === 'function' && pool) await pool.end();
      pool = undefined;
    },
  });
  return withStatsForBacklog(
    store,
    (sql, params) => on(thePool())(sql, params),
    qualify(tableName),
  );
}

/** The journal's tables on PostgreSQL, made or brought up to date by ready(). */
function postgresJournalDdl(qualify: (name: string) => string, tableName: string): string {
  return [
    journalDdl(qualify(tableName), qualify(`${tableName}_attempts`), {
      bigint: 'BIGINT',
      bytes: 'BYTEA',
      serial: 'BIGSERIAL PRIMARY KEY',
      addColumn: 'ADD COLUMN IF NOT EXISTS',
    }),
    // Additive, for journals made before endpoints existed.
    `ALTER TABLE ${qualify(tableName)} ADD COLUMN IF NOT EXISTS ${INTENT_ENDPOINT_COLUMN.name} ${INTENT_ENDPOINT_COLUMN.type}`,
    endpointDdl(qualify(`${tableName}_endpoints`), 'BIGINT'),
    // Room on each page for a row's next version: a claim (the lease, the attempt's start)
    // changes no indexed column, so with room it is a HOT update, no index entry.
    `ALTER TABLE ${qualify(tableName)} SET (fillfactor = ${INTENTS_FILLFACTOR})`,
    `ALTER TABLE ${qualify(`${tableName}_attempts`)} SET (fillfactor = ${ATTEMPTS_FILLFACTOR})`,
  ].join(';\n');
}
