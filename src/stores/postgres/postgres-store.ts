import { InvalidOptionError } from '../../contract/errors.js';
import type { EntryVersion } from '../../ledger/ledger-entry.js';
import type { LedgerStore } from '../../ledger/ledger-store.js';
import { LEDGER_COLUMNS, checkIdentifier, entryValues, rowToEntry, type LedgerRow } from '../ledger-row.js';
import { StoreClosedError, TransactionEndedError } from '../store-errors.js';
import type { PgPool, PgPoolClient, PgQueryable, PgTx } from './pg-pool.js';

export interface PostgresStoreOptions {
  /**
   * A `pg` Pool, or a function that makes one on first use. The store ends a pool it made
   * itself, never one it was given.
   */
  readonly pool: PgPool | (() => PgPool);
  /** The ledger's table, created if missing. @default 'oncely_ledger' */
  readonly table?: string;
  /** The table's schema, created if missing. @default undefined (the connection's search_path) */
  readonly schema?: string | undefined;
}

export interface PostgresStore extends LedgerStore<PgTx> {
  /** The table's name as used in SQL, schema-qualified and quoted. */
  readonly table: string;
}

export const DEFAULT_POSTGRES_STORE_OPTIONS = { table: 'oncely_ledger' } as const;

/**
 * The ledger on PostgreSQL through a `pg` Pool. Claims are single statements that commit at once
 * (INSERT ... ON CONFLICT DO NOTHING, and compare-and-swap UPDATEs on (token, state)), so every
 * worker, in any process, sees an in-flight key at once. The effect runs on one pooled client
 * between BEGIN and COMMIT; it first locks its ledger row (SELECT ... FOR UPDATE), so a takeover
 * by another worker waits for that transaction and then finds the row changed.
 */
export function createPostgresStore(options: PostgresStoreOptions): PostgresStore {
  if (typeof options !== 'object' || options === null) throw new InvalidOptionError('options', options, 'an object with a pool');
  const { pool: poolOption } = options;
  if (typeof poolOption !== 'function' && typeof poolOption?.connect !== 'function') {
    throw new InvalidOptionError('pool', poolOption, 'a pg Pool or a function returning one');
  }
  const tableName = checkIdentifier('table', options.table ?? DEFAULT_POSTGRES_STORE_OPTIONS.table);
  const schema = options.schema === undefined ? undefined : checkIdentifier('schema', options.schema);
  const table = schema === undefined ? `"${tableName}"` : `"${schema}"."${tableName}"`;
  const ownsPool = typeof poolOption === 'function';

  let pool: PgPool | undefined;
  let ready: Promise<void> | undefined;
  let closed = false;

  const n = LEDGER_COLUMNS.length;
  const where = (from: number): string => `scope = $${from} AND key = $${from + 1} AND token = $${from + 2} AND state = $${from + 3}`;
  const sql = {
    get: `SELECT * FROM ${table} WHERE scope = $1 AND key = $2`,
    insert: `INSERT INTO ${table} (${LEDGER_COLUMNS.join(', ')}) VALUES (${LEDGER_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')}) ON CONFLICT (scope, key) DO NOTHING`,
    swap: `UPDATE ${table} SET ${LEDGER_COLUMNS.map((c, i) => `${c} = $${i + 1}`).join(', ')} WHERE ${where(n + 1)}`,
    remove: `DELETE FROM ${table} WHERE ${where(1)}`,
    hold: `SELECT 1 FROM ${table} WHERE ${where(1)} FOR UPDATE`,
    tombstone: `UPDATE ${table} SET state = 'expired', expired_at = expires_at, expires_at = expires_at + $1, lease_expires_at = NULL, status = NULL, headers = NULL, body = NULL WHERE state <> 'expired' AND expires_at <= $2`,
    purge: `DELETE FROM ${table} WHERE state = 'expired' AND expires_at <= $1`,
  };

  function thePool(): PgPool {
    if (closed) throw new StoreClosedError('postgres');
    return (pool ??= typeof poolOption === 'function' ? poolOption() : poolOption);
  }

  /** Creates the schema and table once; a failure is retried by the next call. */
  function setUp(): Promise<void> {
    ready ??= inTransaction(thePool(), async (client) => {
      // Two processes starting together would race on CREATE TABLE IF NOT EXISTS (a unique
      // violation on pg_type); an advisory lock on the table's name lets one go first.
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`oncely:${table}`]);
      if (schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await client.query(`CREATE TABLE IF NOT EXISTS ${table} (
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('in_flight', 'completed', 'expired')),
        token TEXT NOT NULL,
        first_seen_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        lease_expires_at BIGINT,
        completed_at BIGINT,
        expired_at BIGINT,
        status INTEGER,
        headers TEXT,
        body BYTEA,
        PRIMARY KEY (scope, key)
      )`);
      await client.query(`CREATE INDEX IF NOT EXISTS "${tableName}_expires_at" ON ${table} (expires_at)`);
    }).catch((error: unknown) => {
      ready = undefined;
      throw error;
    });
    return ready;
  }

  async function query(text: string, values: unknown[]): Promise<{ rows: unknown[]; rowCount: number }> {
    await setUp();
    const result = await thePool().query(text, values);
    return { rows: result.rows, rowCount: result.rowCount ?? 0 };
  }

  const versionParams = (v: EntryVersion): unknown[] => [v.scope, v.key, v.token, v.state];

  return {
    name: 'postgres',
    table,

    async get(scope, key) {
      const { rows } = await query(sql.get, [scope, key]);
      return rows[0] === undefined ? undefined : rowToEntry(rows[0] as LedgerRow);
    },

    insert: async (entry) => (await query(sql.insert, entryValues(entry))).rowCount === 1,

    swap: async (expected, next) => (await query(sql.swap, [...entryValues(next), ...versionParams(expected)])).rowCount === 1,

    remove: async (expected) => (await query(sql.remove, versionParams(expected))).rowCount === 1,

    async transaction(fn) {
      await setUp();
      return inTransaction(thePool(), async (client) => {
        let active = true;
        const tx: PgTx = {
          async query<R>(text: string, values?: unknown[]) {
            if (!active) throw new TransactionEndedError('postgres');
            const result = await client.query(text, values);
            return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
          },
        };
        try {
          return await fn(tx);
        } finally {
          active = false;
        }
      });
    },

    hold: async (tx, expected) => (await tx.query(sql.hold, versionParams(expected))).rowCount === 1,

    complete: async (tx, expected, next) => (await tx.query(sql.swap, [...entryValues(next), ...versionParams(expected)])).rowCount === 1,

    async sweep(nowMs, tombstoneMs) {
      await setUp();
      return inTransaction(thePool(), async (client) => {
        const tombstoned = (await client.query(sql.tombstone, [tombstoneMs, nowMs])).rowCount ?? 0;
        const deleted = (await client.query(sql.purge, [nowMs])).rowCount ?? 0;
        return { tombstoned, deleted };
      });
    },

    async close() {
      if (closed) return;
      closed = true;
      if (ownsPool && pool) await pool.end();
      pool = undefined;
    },
  };
}

/**
 * BEGIN, `fn` on one client, COMMIT; ROLLBACK when anything throws. A client whose BEGIN or
 * ROLLBACK failed is destroyed rather than returned to the pool in an unknown state.
 */
async function inTransaction<T>(pool: PgPool, fn: (client: PgQueryable) => Promise<T>): Promise<T> {
  const client: PgPoolClient = await pool.connect();
  try {
    await client.query('BEGIN');
  } catch (error) {
    client.release(true);
    throw error;
  }
  let broken = false;
  try {
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    throw error;
  } finally {
    client.release(broken);
  }
}
