export { sqliteRunner, postgresRunner, SQL_DIALECTS, type SqlDialect, type SqlRunner } from './sql-runner.js';
export {
  sqliteServiceDatabase,
  postgresServiceDatabase,
  columnTypes,
  type ServiceDatabase,
} from './service-database.js';
export { readRowLimit, rowPage, DEFAULT_ROW_LIMITS, ROW_LIMIT_PARAMETER, type RowLimitRead, type RowPage } from './row-limit.js';
