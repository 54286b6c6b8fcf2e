import { after } from 'node:test';
import { createOrmLedgerStore, createSqlStepStore } from '#oncely/stores/orm/index.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../stores/postgres-env.js';
import { tempDir } from '../support/temp-dir.js';
import { ORMS, openOrmBackend, sqliteTarget, type OrmTarget } from '../support/orm-backends.js';
import { runStepsConformance, type StepHarness } from './steps-conformance.js';

// The steps suite through every ORM × database pair: a step's write goes through the ORM's own
// transaction object (step.tx), with the ORM's query builder, and commits with its record.
const dir = tempDir('oncely-orm-steps-');
let n = 0;

async function harness(
  orm: (typeof ORMS)[number],
  target: OrmTarget,
): Promise<StepHarness<unknown>> {
  const backend = await openOrmBackend(orm, target);
  const schema = target.db === 'postgres' ? { schema: target.schema } : {};
  const store = createOrmLedgerStore({ executor: backend.executor, ...schema });
  await store.ready();
  const table = target.db === 'postgres' ? `${target.schema}.steps` : 'steps';
  return {
    store,
    steps: createSqlStepStore(store, { table }),
    write: ({ tx }, id) => backend.writeEffect(tx, id),
    count: backend.countEffects,
    close: () => backend.close(),
  };
}

for (const orm of ORMS)
  runStepsConformance(`${orm} on sqlite`, () => harness(orm, sqliteTarget(dir, `${orm}-${++n}`)));

await describePostgres('the steps conformance suite through ORMs', ({ url, options }) => {
  const schemas: string[] = [];
  after(async () => {
    for (const schema of schemas) await dropSchema(url, schema);
  });
  for (const orm of ORMS)
    runStepsConformance(
      `${orm} on postgres`,
      () => {
        const schema = uniqueSchemaName(`oncely_orm_steps_${orm}`);
        schemas.push(schema);
        return harness(orm, { db: 'postgres', url, schema });
      },
      options,
    );
});
