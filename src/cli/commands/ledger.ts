import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { InvalidOptionError } from '../../contract/errors.js';
import { DEFAULT_BACKEND_OPTIONS } from '../../server/open-backend.js';
import { importOptionalDriver } from '../../stores/optional-driver.js';
import { compactSqliteFile, type CompactProgress } from '../../stores/sqlite/sqlite-compact.js';
import { systemClock } from '../../time/clock.js';
import { processIo, type CliIo } from '../cli-io.js';

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
      const file = flags.sqliteFile ?? join(flags.dataDir, DEFAULT_BACKEND_OPTIONS.sqliteFile);
      if (!existsSync(file))
        throw new InvalidOptionError(
          flags.sqliteFile === undefined ? '--data-dir' : '--sqlite-file',
          flags.sqliteFile ?? flags.dataDir,
          'an existing SQLite ledger file',
        );
      const { openSqliteDatabase } = await importOptionalDriver(
        'better-sqlite3',
        'oncely ledger compact',
        () => import('../../stores/sqlite/open-sqlite-database.js'),
      );
      const db = openSqliteDatabase(file);
      try {
        db.pragma('busy_timeout = 5000');
        const progress = ({ mode, pagesFreed, pagesToFree }: CompactProgress): void => {
          const line =
            mode === 'full'
              ? `compact ${file}: VACUUM, rewriting the file (${pagesToFree} free pages)…`
              : `compact ${file}: ${pagesFreed} of ${pagesToFree} free pages handed back`;
          io.err(io.errIsTTY ? `\r${line}   ` : `${line}\n`);
        };
        const report = await compactSqliteFile(db, {
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
