import { InvalidOptionError } from '../../../contract/errors.js';
import { DURABILITIES, type Durability, type LedgerStore } from '../../../ledger/ledger-store.js';
import { systemClock, type Clock } from '../../../time/clock.js';
import { checkIdentifier } from '../ledger-row.js';
import type { SqliteDatabase, SqliteTx } from '../../sqlite-driver/sqlite-database.js';
import {
  checkBusyTimeoutMs,
  checkSqliteDatabase,
} from '../../sqlite-driver/sqlite-driver-options.js';
import type { SqliteHousekeepingReport } from './sqlite-housekeeping.js';

export interface SqliteStoreOptions {
  /**
   * A better-sqlite3@12 connection, or a function that opens one. A function is called twice
   * when the file is in WAL mode: a writer and a read-only connection for lookups, replays and
   * listings, so reads never queue behind a write. The store closes connections it opened.
   */
  readonly database: SqliteDatabase | (() => SqliteDatabase);
  /** The ledger's table, created if missing. @default 'oncely_ledger' */
  readonly table?: string;
  /**
   * How long a write waits for another process's lock on the file. The store waits itself, in the
   * event loop (write-lock.ts), and sets `busy_timeout = 0` on its writer, a connection given as an
   * object included: SQLite's own wait would freeze the process. @default 5000
   */
  readonly busyTimeoutMs?: number;
  /** What a write waiting for that lock sleeps on between tries (write-lock.ts). @default the system clock */
  readonly clock?: Clock;
  /**
   * 'durable': every commit is fsynced (synchronous = FULL): an acknowledged receipt survives a
   * power cut. 'process': synchronous = NORMAL in WAL: it survives a crash of the process, and
   * the last commits may be lost on power loss (docs/durability.md). @default 'durable'
   */
  readonly durability?: Durability;
}

export interface SqliteStore extends LedgerStore<SqliteTx> {
  readonly table: string;
  /** Where tombstones are kept (see tombstone-row.ts). */
  readonly tombstoneTable: string;
  /** One round of statistics, incremental vacuum and WAL checkpoint, in short turns (sqlite-housekeeping.ts). */
  housekeep(): Promise<SqliteHousekeepingReport>;
  readonly durability: Durability;
  /**
   * Runs `fn` on the read connection: committed rows only, never waiting for a write or a
   * running effect. For GET handlers and listings. Without a read connection (":memory:", a
   * connection given as an object), on the writer between two commits.
   */
  read<T>(fn: (tx: SqliteTx) => T): Promise<T>;
  /** Runs `fn` as one write section, committed (durably) before this resolves: for set-up and small writes of the app. */
  write<T>(fn: (tx: SqliteTx) => T): Promise<T>;
}

export const DEFAULT_SQLITE_STORE_OPTIONS = {
  table: 'oncely_ledger',
  busyTimeoutMs: 5000,
  durability: 'durable',
} as const;

/** The options checked once, at the edge, with the defaults filled in. */
export interface ResolvedSqliteStoreOptions {
  readonly database: SqliteDatabase | (() => SqliteDatabase);
  readonly table: string;
  readonly busyTimeoutMs: number;
  readonly clock: Clock;
  readonly durability: Durability;
}

export function resolveSqliteStoreOptions(options: SqliteStoreOptions): ResolvedSqliteStoreOptions {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('options', options, 'an object with a database');
  const database = checkSqliteDatabase(options.database);
  const table = checkIdentifier('table', options.table ?? DEFAULT_SQLITE_STORE_OPTIONS.table);
  const busyTimeoutMs = checkBusyTimeoutMs(
    options.busyTimeoutMs,
    DEFAULT_SQLITE_STORE_OPTIONS.busyTimeoutMs,
  );
  const durability = options.durability ?? DEFAULT_SQLITE_STORE_OPTIONS.durability;
  if (!DURABILITIES.includes(durability))
    throw new InvalidOptionError('durability', durability, DURABILITIES.join(' or '));
  return { database, table, busyTimeoutMs, clock: options.clock ?? systemClock, durability };
}
