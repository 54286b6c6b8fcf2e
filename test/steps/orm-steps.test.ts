import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createOrmLedgerStore, createSqlStepStore } from '#oncely/stores/orm/index.js';
import { createLedger } from '#oncely/ledger/index.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../stores/postgres-env.js';
import { tempDir } from '../support/temp-dir.js';
import { ORMS, openOrmBackend, sqliteTarget, type OrmTarget } from '../support/orm-backends.js';
import { runStepsConformance, type StepHarness } from './steps-conformance.js';
import { stepAfterWrites } from './step-after-writes.js';

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
    forgets: target.db === 'sqlite',
    close: () => backend.close(),
  };
}

for (const orm of ORMS)
  runStepsConformance(`${orm} on sqlite`, () => harness(orm, sqliteTarget(dir, `${orm}-${++n}`)));

/**
 * The store's commitAlone (a step's record when the step wrote nothing): one statement through
 * the ORM's own query, committed by itself; its RETURNING rows come back, and a statement that
 * fails rejects and leaves nothing.
 */
function commitAloneTests(
  orm: (typeof ORMS)[number],
  target: () => OrmTarget,
  options: { readonly skip?: string | undefined } = {},
): void {
  it(
    `${orm}: commitAlone commits one statement on its own and returns its rows`,
    options,
    async () => {
      const backend = await openOrmBackend(orm, target());
      try {
        const store = createOrmLedgerStore({ executor: backend.executor });
        await store.ready();
        const { commitAlone } = store.capabilities;
        assert.ok(commitAlone !== undefined);
        const rows = await commitAlone(
          'INSERT INTO effects (id, n) VALUES ($1, $2) RETURNING id, n',
          ['alone', 7],
        );
        assert.deepEqual(
          rows.map((row) => [row['id'], Number(row['n'])]),
          [['alone', 7]],
        );
        assert.equal(await backend.countEffects('alone'), 1);
        await assert.rejects(
          commitAlone('INSERT INTO effects (id, n) VALUES ($1, NULL) RETURNING id', ['refused']),
        );
        assert.equal(await backend.countEffects('refused'), 0);
      } finally {
        await backend.close();
      }
    },
  );
}

/**
 * On SQLite the app's one connection is held by the route's transaction from its first
 * statement to the receipt, so a step after it would wait forever for its own record's turn.
 */
describe('a step after the route wrote through its tx, ORM stores over sqlite', () => {
  for (const orm of ORMS)
    it(`${orm}: refused (step_after_writes), not hung; the write commits with the receipt`, async () => {
      const backend = await openOrmBackend(orm, sqliteTarget(dir, `${orm}-after-${++n}`));
      try {
        const store = createOrmLedgerStore({ executor: backend.executor });
        const steps = createSqlStepStore(store);
        const ledger = createLedger({ store, steps });
        await stepAfterWrites(ledger, (tx) => backend.writeEffect(tx, 'order-1'));
        // The request went on: its write committed with the receipt, and the run's steps went
        // with it (one owner from its start: StepStore.forget).
        assert.equal(await backend.countEffects('order-1'), 1);
        const { rows } = await backend.executor.query('SELECT name FROM oncely_steps', []);
        assert.deepEqual(rows, []);
      } finally {
        await backend.close();
      }
    });
});

describe('commitAlone on ORM stores over sqlite', () => {
  for (const orm of ORMS) commitAloneTests(orm, () => sqliteTarget(dir, `${orm}-alone-${++n}`));
});

await describePostgres('the steps conformance suite through ORMs', ({ url, options }) => {
  const schemas: string[] = [];
  after(async () => {
    for (const schema of schemas) await dropSchema(url, schema);
  });
  for (const orm of ORMS)
    commitAloneTests(
      orm,
      () => {
        const schema = uniqueSchemaName(`oncely_orm_alone_${orm}`);
        schemas.push(schema);
        return { db: 'postgres', url, schema };
      },
      options,
    );
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
