/** Drizzle (node-postgres, better-sqlite3) as the ledger's executor; the route gets its `tx`. */
export {
  drizzlePgExecutor,
  drizzleSqliteExecutor,
  type DrizzlePgLike,
  type DrizzleSqliteLike,
  type DrizzleTransactionOf,
} from '../drizzle-executor.js';
