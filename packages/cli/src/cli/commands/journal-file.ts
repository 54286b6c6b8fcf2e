import { existsSync } from 'node:fs';
import { InvalidOptionError } from 'oncely';

/** The table a journal made by `oncely` holds (createSqliteJournalStore's default). */
const JOURNAL_TABLE = 'oncely_intents';

/** What opening a SQLite file for a look needs: the store module's opener. */
type Opener = (file: string) => {
  prepare(sql: string): { all(...params: unknown[]): unknown[] };
  close(): unknown;
};

/**
 * Checks the SQLite journal file before the store touches it: the store sets WAL mode and adds
 * its tables on first use, which would alter any file it is pointed at.
 * - missing: refused, unless `create` (the opener makes its folder and the store the file, on the
 *   first write, so a command that refuses its other flags first leaves nothing behind);
 * - not SQLite, or SQLite without the journal's table: refused, even with `create`, and left as
 *   it was: a plain SELECT on sqlite_master writes nothing. An empty database (no table at all,
 *   a 0-byte file included) counts as missing.
 * A journal inside the application's own database (the transactional outbox) has the table, and
 * passes, as does `:memory:`. Bad input: InvalidOptionError, one line and exit 2.
 */
export function checkJournalFile(file: string, create: boolean, open: Opener): void {
  const refuse = (why: string): never => {
    throw new InvalidOptionError('--journal', file, why);
  };
  // SQLite's own name for a database in memory: nothing on disk to find, to alter or to make.
  if (file === ':memory:') return;
  if (!existsSync(file)) {
    if (!create)
      refuse('an existing journal file (none is there; give --create to start a new one)');
    return;
  }
  let tables: string[];
  try {
    const db = open(file);
    try {
      tables = (
        db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as {
          name: string;
        }[]
      ).map((row) => row.name);
    } finally {
      db.close();
    }
  } catch {
    return refuse('an oncely journal (this file is not a SQLite database; it was left unchanged)');
  }
  if (tables.includes(JOURNAL_TABLE)) return;
  if (tables.length === 0 && create) return;
  refuse(
    tables.length === 0
      ? 'an oncely journal (this SQLite database is empty; give --create to start one in it)'
      : `an oncely journal (this SQLite database has no ${JOURNAL_TABLE} table; it was left unchanged)`,
  );
}
