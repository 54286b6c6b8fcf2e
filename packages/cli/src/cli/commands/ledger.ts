import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { InvalidOptionError, systemClock } from 'oncely';
import { DEFAULT_BACKEND_OPTIONS } from '../../serve/open-backend.js';
import { importOptionalDriver } from '../../shared/optional-driver.js';
import type { CompactProgress, LedgerMigration, SqliteDatabase } from 'oncely/stores/sqlite';
import { processIo, type CliIo } from '../cli-io.js';
import type * as SqliteStores from 'oncely/stores/sqlite';

interface MigrateFlags {
  dataDir: string;
  sqliteFile?: string;
  db?: string;
}

interface CompactFlags {
  dataDir: string;
  sqliteFile?: string;
  full?: boolean;
}

/** Between two steps: a server on the file gets the write lock meanwhile. */
const STEP_PAUSE_MS = 20;

const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** `oncely ledger …`: upkeep of a ledger's database. */
export function registerLedger(program: Command, io: CliIo = processIo): void {
  const ledger = program.command('ledger').description('upkeep of the ledger database');
  registerCompact(ledger, io);
  registerMigrate(ledger, io);
}

/** `oncely ledger compact`. */
function registerCompact(ledger: Command, io: CliIo): void {
  ledger
    .command('compact')
    .description('give the free pages of a SQLite ledger file back to the file system')
    .option(
      '--data-dir <dir>',
      `the data directory of oncely serve (the file is <dir>/${DEFAULT_BACKEND_OPTIONS.sqliteFile})`,
      DEFAULT_BACKEND_OPTIONS.dataDir,
    )
    .option('--sqlite-file <file>', 'the SQLite file itself (instead of --data-dir)')
    .option('--full', 'rewrite the whole file with VACUUM (stop the server first)')
    .addHelpText(
      'after',
      `
A sweep deletes expired receipts; SQLite keeps their pages for new rows, and the store hands a
few back after each sweep. This hands back all of them now. A file the store made
(auto_vacuum = INCREMENTAL) is compacted in steps of 16 MiB, each a short write transaction, so
a server on the file goes on meanwhile. A file made by an earlier oncely, or --full, is
rewritten by one VACUUM, which keeps other writers out until it ends: stop the server first.
Progress goes to stderr, the result to stdout.

Examples:
  npx oncely ledger compact                          ./oncely-data/oncely.db
  npx oncely ledger compact --sqlite-file app.db --full`,
    )
    .action(async (flags: CompactFlags) => {
      const { file, db, sqlite } = await openLedgerFile(flags, 'oncely ledger compact');
      try {
        const progress = ({ mode, pagesFreed, pagesToFree }: CompactProgress): void => {
          const line =
            mode === 'full'
              ? `compact ${file}: VACUUM, rewriting the file (${pagesToFree} free pages)…`
              : `compact ${file}: ${pagesFreed} of ${pagesToFree} free pages handed back`;
          io.err(io.errIsTTY ? `\r${line}   ` : `${line}\n`);
        };
        const report = await sqlite.compactSqliteFile(db, {
          ...(flags.full ? { full: true } : {}),
          onProgress: progress,
          between: () => systemClock.sleep(STEP_PAUSE_MS),
        });
        if (io.errIsTTY) io.err('\n');
        io.out(
          `compacted ${file} (${report.mode}): ${mib(report.bytesBefore)} -> ${mib(report.bytesAfter)}, ${report.pagesFreed} pages handed back\n`,
        );
      } finally {
        db.close();
      }
    });
}

/** `oncely ledger migrate`. */
function registerMigrate(ledger: Command, io: CliIo): void {
  ledger
    .command('migrate')
    .description('carry a ledger table made by an earlier oncely over to the current layout')
    .option(
      '--data-dir <dir>',
      `the data directory of oncely serve (the file is <dir>/${DEFAULT_BACKEND_OPTIONS.sqliteFile})`,
      DEFAULT_BACKEND_OPTIONS.dataDir,
    )
    .option('--sqlite-file <file>', 'the SQLite file itself (instead of --data-dir)')
    .option('--db <url>', 'a PostgreSQL ledger instead: postgres://user@host:5432/db')
    .addHelpText(
      'after',
      `
A ledger table made by an earlier oncely (fingerprints as text, tombstones in place; on
PostgreSQL, receipts not partitioned by time) is refused at start with a ledger_layout error.
This carries every receipt, claim and tombstone over to the current layout, in one transaction:
on any error (a row that is not what oncely wrote) nothing changes. A table already in the
current layout is left as it is. Stop the servers of the earlier oncely first: the migration keeps
writers out until it ends (docs/ledger.md says how long it takes). Progress goes to stderr, the
result to stdout. On SQLite, "oncely ledger compact --full" afterwards hands the earlier table's
pages back to the file system.

Examples:
  npx oncely ledger migrate                          ./oncely-data/oncely.db
  npx oncely ledger migrate --db postgres://postgres@127.0.0.1:5432/app`,
    )
    .action(async (flags: MigrateFlags) => {
      const progress =
        (where: string) =>
        (done: number, total: number): void => {
          const line = `migrate ${where}: ${done} of ${total} rows carried over`;
          io.err(io.errIsTTY ? `\r${line}   ` : `${line}\n`);
        };
      const report = async (where: string, run: () => Promise<LedgerMigration>): Promise<void> => {
        const done = await run();
        if (io.errIsTTY && done.found === 'earlier') io.err('\n');
        io.out(
          done.found === 'earlier'
            ? `migrated ${done.table} in ${where}: ${done.receipts} receipts and claims, ${done.tombstones} tombstones\n`
            : done.found === 'current'
              ? `${done.table} in ${where} is already in the current layout: nothing to do\n`
              : `no ledger table ${done.table} in ${where}: nothing to do\n`,
        );
      };
      if (flags.db !== undefined) {
        const url = flags.db;
        const { openPostgresPool, migratePostgresLedger, redact } = await importOptionalDriver(
          'pg',
          'oncely ledger migrate --db',
          () => import('oncely/stores/postgres'),
        );
        let pool;
        try {
          pool = openPostgresPool(url, { max: 1 });
        } catch (error) {
          if (error instanceof InvalidOptionError && error.option === 'url')
            throw new InvalidOptionError('--db', redact(url), error.allowed);
          throw error;
        }
        try {
          await report(redact(url), () =>
            migratePostgresLedger(pool, { onProgress: progress(redact(url)) }),
          );
        } finally {
          await pool.end();
        }
        return;
      }
      const { file, db, sqlite } = await openLedgerFile(flags, 'oncely ledger migrate');
      try {
        await report(file, async () =>
          sqlite.migrateSqliteLedger(db, { onProgress: progress(file) }),
        );
      } finally {
        db.close();
      }
    });
}

/**
 * The SQLite ledger file the flags name (`--sqlite-file`, else the one in `--data-dir`), opened
 * with a 5 s busy timeout so a running server's writes are waited for; refused when it does not
 * exist (opening would make an empty one).
 */
async function openLedgerFile(
  flags: { readonly sqliteFile?: string | undefined; readonly dataDir: string },
  command: string,
): Promise<{ file: string; db: SqliteDatabase; sqlite: typeof SqliteStores }> {
  const file = flags.sqliteFile ?? join(flags.dataDir, DEFAULT_BACKEND_OPTIONS.sqliteFile);
  if (!existsSync(file))
    throw new InvalidOptionError(
      flags.sqliteFile === undefined ? '--data-dir' : '--sqlite-file',
      flags.sqliteFile ?? flags.dataDir,
      'an existing SQLite ledger file',
    );
  const sqlite = await importOptionalDriver(
    'better-sqlite3',
    command,
    () => import('oncely/stores/sqlite'),
  );
  const db = sqlite.openSqliteDatabase(file);
  db.pragma('busy_timeout = 5000');
  return { file, db, sqlite };
}
