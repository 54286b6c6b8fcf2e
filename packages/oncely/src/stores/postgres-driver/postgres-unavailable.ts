/**
 * SQLSTATE classes and codes that say the server, not the statement, failed (PostgreSQL's
 * Appendix A): 08 connection exception; 53 insufficient resources (disk full, out of memory, too
 * many connections); 57P01-57P03 the server shutting down, crashed, or not accepting yet.
 */
const UNAVAILABLE_STATES = /^(08|53|57P0[123])/;
/** Socket errors of a connection that failed or ended. */
const SOCKET_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH']);
/**
 * node-postgres raises these as plain Errors, without a code: the connection ended under a query,
 * and every query sent on that client afterwards (lib/client.js); pg-pool, a pool that could not
 * hand out a connection within its connect timeout (every one busy, or the server slow to
 * accept), and a pool already ended, as while a server drains (pg-pool/index.js).
 */
const CLIENT_GONE =
  /^(Connection terminated|Client has encountered a connection error|Client was closed|timeout exceeded when trying to connect|Cannot use a pool after calling end on the pool)/;

/** True when `error` from a statement says the PostgreSQL server went away or ran out of room. */
export function isPostgresUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return UNAVAILABLE_STATES.test(code) || SOCKET_CODES.has(code);
  return CLIENT_GONE.test(error.message);
}
