/** Knex (pg, better-sqlite3) as the ledger's executor; the route gets its `Knex.Transaction`. */
export { knexExecutor } from '../knex-executor.js';
