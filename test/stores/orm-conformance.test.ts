import { after, describe } from 'node:test';
import { createOrmLedgerStore } from '#oncely/stores/orm/index.js';
import { runLedgerConformance } from './conformance.js';
import { describePostgres, dropSchema, uniqueSchemaName } from './postgres-env.js';
import { tempDir } from '../support/temp-dir.js';
import { ORMS, openOrmBackend, sqliteTarget } from '../support/orm-backends.js';

// The store conformance suite on every ORM × database pair: the effect is written with the ORM's
// own query builder through the transaction object the route gets (test/support/orm-backends.ts).
const dir = tempDir('oncely-orm-');
let n = 0;

for (const orm of ORMS) {
  runLedgerConformance(`${orm} on sqlite`, async () => {
    const backend = await openOrmBackend(orm, sqliteTarget(dir, `${orm}-${++n}`));
    const store = createOrmLedgerStore({ executor: backend.executor });
    return {
      store,
      writeEffect: backend.writeEffect,
      countEffects: backend.countEffects,
      close: () => backend.close(),
    };
  });
}

await describePostgres('the ledger conformance suite through ORMs', ({ url, options }) => {
  const schemas: string[] = [];
  after(async () => {
    for (const schema of schemas) await dropSchema(url, schema);
  });
  // Side by side: each run waits on PostgreSQL (each test makes a schema, its tables, its
  // commits) far longer than it computes, so their waits overlap. Each has its own schemas and
  // pool; inside a run, one test at a time as always.
  describe('on PostgreSQL, the five ORMs side by side', { concurrency: true }, () => {
    for (const orm of ORMS) {
      runLedgerConformance(
        `${orm} on postgres`,
        async () => {
          // A schema per harness: the effects table of one test never sees another's rows.
          const schema = uniqueSchemaName(`oncely_orm_${orm}`);
          schemas.push(schema);
          const backend = await openOrmBackend(orm, { db: 'postgres', url, schema });
          // One-second tombstone partitions, as the pg store's conformance run uses.
          const store = createOrmLedgerStore({
            executor: backend.executor,
            schema,
            tombstonePartitionMs: 1000,
          });
          await store.ready();
          return {
            store,
            writeEffect: backend.writeEffect,
            countEffects: backend.countEffects,
            close: () => backend.close(),
          };
        },
        options,
      );
    }
  });
});
