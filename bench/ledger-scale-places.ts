/**
 * Where bench/ledger-scale measures: a SQLite file or a PostgreSQL schema of its own per ledger,
 * with the store on it, bulk loading, and the size of a table.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { LedgerStore } from 'oncely';
import type { Durability } from 'oncely';
import { createPostgresStore, type PgPool } from 'oncely/stores/postgres';
import { createSqliteStore, openSqliteDatabase, type SqliteDatabase } from 'oncely/stores/sqlite';
import { loadPostgres, loadSqlite, type Layout } from './ledger-scale-load.js';
import type { WriterTarget } from './ledger-scale-writer.js';

const DAY_MS = 86_400_000;

export const BACKENDS = ['sqlite', 'postgres'] as const;
export type Backend = (typeof BACKENDS)[number];

export interface Place {
  readonly backend: Backend;
  readonly target: WriterTarget;
  readonly store: LedgerStore<unknown>;
  /** Bulk-loads keys [from, to) into the live table. */
  load(
    layout: Layout,
    table: string,
    range: { from: number; to: number; expiresFrom: number; spreadMs: number },
  ): Promise<void>;
  /** Bytes the table and its indexes take (SQLite: pages of the file it lives in alone). */
  bytesOf(table: string): Promise<number>;
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
}

const dir = mkdtempSync(join(tmpdir(), 'oncely-scale-'));
let places = 0;

/** Removes the SQLite files of every place made. */
export function removePlaces(): void {
  rmSync(dir, { recursive: true, force: true });
}

function progress(written: number): void {
  if (process.stderr.isTTY)
    process.stderr.write(`\r  loaded ${written.toLocaleString('en')} rows   `);
}

export function sqlitePlace(durability: Durability): Place {
  const file = join(dir, `scale-${++places}.db`);
  const db = openSqliteDatabase(file);
  // A factory, as `oncely serve` opens it: a writer, and a read connection for lookups.
  let opened = 0;
  const store = createSqliteStore({
    database: () => (opened++ === 0 ? db : openSqliteDatabase(file)),
    busyTimeoutMs: 30_000,
    durability,
  });
  return {
    backend: 'sqlite',
    target: { backend: 'sqlite', where: file, durability },
    store: store as LedgerStore<unknown>,
    load: async (layout, table, range) => loadSqlite(db, table, layout, range, progress),
    // The size of the table and its indexes, read from the dbstat virtual table.
    bytesOf: async (table) => {
      db.pragma('wal_checkpoint(TRUNCATE)');
      const row = db
        .prepare(
          `SELECT sum(pgsize) AS n FROM dbstat WHERE name = ? OR name IN (SELECT name FROM sqlite_master WHERE tbl_name = ?)`,
        )
        .get(table, table) as { n: number };
      return Number(row.n);
    },
    exec: async (sql) => void db.exec(sql),
    close: async () => {
      await store.close();
      (db as SqliteDatabase).close();
    },
  };
}

export function postgresPlace(url: string, durability: Durability): Place {
  const schema = `oncely_scale_${process.pid}_${++places}`;
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  const store = createPostgresStore({ pool: pool as unknown as PgPool, schema, durability });
  return {
    backend: 'postgres',
    target: { backend: 'postgres', where: url, schema, durability },
    store: store as LedgerStore<unknown>,
    load: async (layout, table, range) => {
      // The current layout's receipts are partitioned by first sighting (a day before expiry here).
      if (layout === 'current')
        await store.preparePartitions(
          range.expiresFrom - DAY_MS,
          range.expiresFrom + range.spreadMs - DAY_MS + 1,
        );
      await loadPostgres(pool, `"${schema}".${table}`, layout, range, progress);
    },
    bytesOf: async (table) => {
      await pool.query(`VACUUM ANALYZE "${schema}".${table}`);
      // A partitioned table holds nothing itself: its partitions (and their indexes) do.
      const { rows } = await pool.query(
        'SELECT coalesce((SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree($1)), pg_total_relation_size($1)) AS n',
        [`"${schema}".${table}`],
      );
      return Number(rows[0].n);
    },
    exec: async (sql) => void (await pool.query(sql.replaceAll('%s', `"${schema}"`))),
    close: async () => {
      await store.close();
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}
