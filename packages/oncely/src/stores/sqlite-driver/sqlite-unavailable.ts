/**
 * SQLite result codes that say the file, not the statement, failed: no room (SQLITE_FULL, which
 * is also ENOSPC and EFBIG), an I/O error (every SQLITE_IOERR_*), a lock that was not given up in
 * time, a file that cannot be opened. https://www.sqlite.org/rescode.html
 */
const UNAVAILABLE_CODES = /^SQLITE_(FULL|IOERR|BUSY|CANTOPEN)/;

/**
 * better-sqlite3's error for a statement on a connection closed meanwhile: a TypeError with no
 * code (src/util/macros.cpp). A server that drains closes its database after its last answer,
 * but a request still running then (a client that left, a drain's time limit) meets it.
 */
const CLOSED_CONNECTION = 'The database connection is not open';

/** True when `error` from a statement (better-sqlite3's SqliteError) says the database file failed. */
export function isSqliteUnavailable(error: unknown): boolean {
  if (error instanceof TypeError) return error.message === CLOSED_CONNECTION;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && UNAVAILABLE_CODES.test(code);
}
