/**
 * One worker process of bench/fifo: an outbox worker on the journal named by its arguments
 * (`sqlite FILE` or `postgres URL SCHEMA`) that delivers until nothing is pending, then tells its
 * parent how many settlements it wrote, and exits.
 */
import pg from 'pg';
import { createOutboxWorker, type JournalStore } from 'oncely';
import { createPostgresJournalStore } from 'oncely/stores/postgres';
import { createSqliteJournalStore, openSqliteDatabase } from 'oncely/stores/sqlite';

const [backend, where, schema, owner] = process.argv.slice(2);
const pool = backend === 'postgres' ? new pg.Pool({ connectionString: where, max: 4 }) : undefined;
const store = (
  pool
    ? createPostgresJournalStore({ pool, schema: schema! })
    : createSqliteJournalStore({ database: () => openSqliteDatabase(where!) })
) as JournalStore<unknown>;
let settled = 0;
const worker = createOutboxWorker({
  store,
  owner: owner!,
  batchSize: 16,
  pollMs: 20,
  onSettled: (event) => void (event.written && (settled += 1)),
});
const counts = await worker.resume();
await store.close();
await pool?.end();
process.send?.({ settled, delivered: counts.delivered, pending: counts.pending });
