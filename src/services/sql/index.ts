export { sqliteRunner, postgresRunner, SQL_DIALECTS, type SqlDialect, type SqlRunner } from './sql-runner.js';
export {
  sqliteServiceDatabase,
  postgresServiceDatabase,
  columnTypes,
  type ServiceDatabase,
} from './service-database.js';
