/**
 * SQLite result codes that say the file, not the statement, failed: no room (SQLITE_FULL, which
 * is also ENOSPC and EFBIG), an I/O error (every SQLITE_IOERR_*), a lock that was not given up in
 * time, a file that cannot be opened. https://www.sqlite.org/rescode.html
 */
const UNAVAILABLE_CODES = /^SQLITE_(FULL|IOERR|BUSY|CANTOPEN)/;

/** True when `error` from a statement (better-sqlite3's SqliteError) says the database file failed. */
export function isSqliteUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && UNAVAILABLE_CODES.test(code);
}
