import type { ServiceDatabase } from './service-database.js';
import type { SqlHandle } from 'oncely';

/**
 * Runs a service's table set-up (CREATE TABLE IF NOT EXISTS, seed rows) in one transaction.
 * On PostgreSQL it first takes a transaction-scoped advisory lock named after `name`: two servers
 * starting on one database would otherwise race on CREATE TABLE IF NOT EXISTS, and the loser
 * fails with a unique violation on pg_type. The lock lets one go first, as the ledger's store does.
 */
export async function setUpTables<Tx>(
  db: ServiceDatabase<Tx>,
  name: string,
  create: (sql: SqlHandle) => Promise<void>,
): Promise<void> {
  await db.transaction(async (sql) => {
    if (sql.dialect === 'postgres')
      await sql.all('SELECT pg_advisory_xact_lock(hashtext($1))', [`oncely:${name}`]);
    await create(sql);
  });
}
