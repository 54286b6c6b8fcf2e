/** Kysely (PostgresDialect, SqliteDialect) as the ledger's executor; the route gets its `Transaction<DB>`. */
export { kyselyExecutor, type KyselyExecutorOptions } from '../kysely-executor.js';
