/**
 * The ledger on the app's own ORM (docs/orm.md): `createOrmLedgerStore({ executor })` with an
 * executor from `oncely/orm/kysely`, `oncely/orm/knex` or `oncely/orm/drizzle`. The route's
 * writes, through the ORM's transaction object (`context.tx`), commit with the receipt.
 */
export {
  createOrmLedgerStore,
  type OrmLedgerStore,
  type OrmLedgerStoreOptions,
} from '../ledger/executor/orm-ledger-store.js';
export { transactionSql } from './transaction-sql.js';
export type { ExecutorCapabilities, ExecutorRows, SqlExecutor } from './sql-executor.js';
export { TransactionEndedError, StoreClosedError } from '../store-errors.js';
export { createSqlStepStore, type SqlStepStoreOptions } from '../ledger/steps/sql-step-store.js';
