export {
  serviceDatabase,
  sqliteServiceDatabase,
  postgresServiceDatabase,
  columnTypes,
  type ServiceDatabase,
} from './service-database.js';
export { SQL_DIALECTS, type SqlDialect, type SqlHandle } from 'oncely';
export {
  readRowLimit,
  rowPage,
  DEFAULT_ROW_LIMITS,
  ROW_LIMIT_PARAMETER,
  type RowLimitRead,
  type RowPage,
} from './row-limit.js';
