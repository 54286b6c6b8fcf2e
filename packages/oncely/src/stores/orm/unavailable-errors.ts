import type { SqlDialect } from '../../ledger/sql-handle.js';
import { isPostgresUnavailable } from '../postgres-driver/postgres-unavailable.js';
import { isSqliteUnavailable } from '../sqlite-driver/sqlite-unavailable.js';
import { causes } from './sql-executor.js';

/**
 * True when `error` or an error it wraps says the database failed rather than the statement,
 * by the driver's own codes (postgres-unavailable.ts, sqlite-unavailable.ts), or when `extra`
 * (an ORM's own signal, such as a pool that found no connection in time) says so.
 */
export function unavailableBy(
  dialect: SqlDialect,
  extra: (error: unknown) => boolean = () => false,
): (error: unknown) => boolean {
  const driver = dialect === 'postgres' ? isPostgresUnavailable : isSqliteUnavailable;
  return (error) => {
    for (const e of causes(error)) if (driver(e) || extra(e)) return true;
    return false;
  };
}
