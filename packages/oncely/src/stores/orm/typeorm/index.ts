/**
 * TypeORM (postgres, better-sqlite3) as the ledger's executor; the route gets the transaction's
 * EntityManager.
 */
export { typeormExecutor } from '../typeorm-executor.js';
