import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { InvalidOptionError, OncelyError, isOncelyError, type LedgerStore } from 'oncely';
import {
  postgresServiceDatabase,
  sqliteServiceDatabase,
  type ServiceDatabase,
} from '../receivers/sql/service-database.js';
import type { PgPool, PgTx } from 'oncely/stores/postgres';
import { importOptionalDriver } from '../shared/optional-driver.js';
import type { SqliteTx } from 'oncely/stores/sqlite';

/** The ledger's store and the services' database over it: one database, one transaction per request. */
export interface Backend<Tx> {
  readonly kind: 'sqlite' | 'postgres';
  /** For the banner: the file, or the URL without its password. */
  readonly description: string;
  readonly store: LedgerStore<Tx>;
  readonly db: ServiceDatabase<Tx>;
  /** The ledger table's name as SQL sees it (quoted and schema-qualified on PostgreSQL). */
  readonly ledgerTable: string;
  /** Its tombstone table, the same way. */
  readonly tombstoneTable: string;
  /** Closes the connection or ends the pool. Idempotent. */
  close(): Promise<void>;
}

export type AnyBackend = Backend<SqliteTx> | Backend<PgTx>;

export interface BackendOptions {
  /** Where the SQLite file lives, created on demand. @default './oncely-data' */
  readonly dataDir?: string;
  /** A postgres:// URL: use PostgreSQL instead of SQLite. @default undefined */
  readonly db?: string | undefined;
  /**
   * PostgreSQL only: a schema for the ledger and the services' tables (set as the pool's
   * search_path). Tests use one each. @default undefined (the server's default search_path)
   */
  readonly pgSchema?: string | undefined;
  /** Told about errors of idle pooled connections (which would otherwise crash the process). @default nothing */
  readonly onPoolError?: (error: Error) => void;
}

export const DEFAULT_BACKEND_OPTIONS = {
  dataDir: './oncely-data',
  /** The SQLite file inside dataDir. */
  sqliteFile: 'oncely.db',
  /** How long to wait for PostgreSQL to accept a connection. */
  pgConnectTimeoutMs: 5000,
} as const;

/**
 * Opens the store the server runs on and checks it answers (one transaction), so a bad path or
 * an unreachable database is a one-line error at start, not a 503 on the first request.
 */
export async function openBackend(options: BackendOptions = {}): Promise<AnyBackend> {
  const backend =
    options.db === undefined
      ? await openSqlite(options.dataDir ?? DEFAULT_BACKEND_OPTIONS.dataDir)
      : await openPostgres(options);
  try {
    await backend.store.ready?.();
  } catch (cause) {
    await backend.close().catch(() => {});
    if (isOncelyError(cause) && cause.code === 'store_unavailable') throw cause; // it names the file already
    const why = cause instanceof Error ? cause.message || cause.name : String(cause);
    throw new OncelyError(
      'store_unavailable',
      `cannot open the ${backend.kind} store at ${backend.description}: ${why}`,
      { cause },
    );
  }
  return backend;
}

async function openSqlite(dataDir: string): Promise<Backend<SqliteTx>> {
  // The drivers are optional peers: loaded when a store needs one (apps/shared/optional-driver.ts).
  const { openSqliteDatabase, createSqliteStore } = await importOptionalDriver(
    'better-sqlite3',
    'the SQLite store',
    () => import('oncely/stores/sqlite'),
  );
  const dir = resolve(dataDir);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (cause) {
    throw new OncelyError(
      'store_unavailable',
      `cannot create the data directory ${dataDir}: ${(cause as NodeJS.ErrnoException).code ?? String(cause)}`,
      { cause },
    );
  }
  const file = join(dir, DEFAULT_BACKEND_OPTIONS.sqliteFile);
  const store = createSqliteStore({ database: () => openSqliteDatabase(file) });
  return {
    kind: 'sqlite',
    description: file,
    store,
    db: sqliteServiceDatabase(store),
    ledgerTable: store.table,
    tombstoneTable: store.tombstoneTable,
    close: () => store.close(),
  };
}

async function openPostgres(options: BackendOptions): Promise<Backend<PgTx>> {
  const { openPostgresPool, createPostgresStore, redact } = await importOptionalDriver(
    'pg',
    'the PostgreSQL store (--db)',
    () => import('oncely/stores/postgres'),
  );
  const url = options.db ?? '';
  const schema =
    options.pgSchema === undefined ? undefined : sqlIdentifier('pgSchema', options.pgSchema);
  let pool: PgPool;
  try {
    pool = openPostgresPool(url, {
      connectTimeoutMs: DEFAULT_BACKEND_OPTIONS.pgConnectTimeoutMs,
      ...(schema === undefined ? {} : { searchPath: schema }),
      ...(options.onPoolError ? { onError: options.onPoolError } : {}),
    });
  } catch (error) {
    if (error instanceof InvalidOptionError && error.option === 'url')
      throw new InvalidOptionError('--db', redact(url), error.allowed);
    throw error;
  }
  const store = createPostgresStore({ pool, ...(schema === undefined ? {} : { schema }) });
  let ended = false;
  return {
    kind: 'postgres',
    description: redact(url),
    store,
    db: postgresServiceDatabase(store),
    ledgerTable: store.table,
    tombstoneTable: store.tombstoneTable,
    async close() {
      await store.close();
      if (!ended) {
        ended = true;
        await pool.end();
      }
    },
  };
}

/**
 * The schema goes into the pool's search_path before the store sees it, so it is checked here:
 * the rule the PostgreSQL store applies to its own schema option.
 */
function sqlIdentifier(option: string, value: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(value))
    throw new InvalidOptionError(
      option,
      value,
      'an SQL identifier: a letter or _, then letters, digits or _, at most 63 in all',
    );
  return value;
}
