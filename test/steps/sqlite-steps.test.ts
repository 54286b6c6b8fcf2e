import { it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import {
  createSqliteStore,
  createSqlStepStore,
  openSqliteDatabase,
  type SqliteTx,
} from '#oncely/stores/sqlite/index.js';
import type { StepRecord } from '#oncely/ledger/step-store.js';
import { createLedger } from '#oncely/ledger/index.js';
import { runStepsConformance } from './steps-conformance.js';
import { stepAfterWrites } from './step-after-writes.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('oncely-steps-');
let n = 0;

runStepsConformance<SqliteTx>('sqlite', async () => {
  const file = join(dir, `steps-${++n}.db`);
  const store = createSqliteStore({ database: () => openSqliteDatabase(file) });
  await store.write((tx) => tx.exec('CREATE TABLE IF NOT EXISTS effects (id TEXT NOT NULL)'));
  return {
    store,
    steps: createSqlStepStore(store),
    write: async ({ sql }, id) =>
      void (await sql.run('INSERT INTO effects (id) VALUES ($1)', [id])),
    count: (id) =>
      store.read(
        (tx) => tx.get<{ n: number }>('SELECT count(*) AS n FROM effects WHERE id = ?', id)!.n,
      ),
    forgets: true,
    close: () => store.close(),
  };
});

const step = (position: number, name: string): StepRecord => ({
  scope: 'alice',
  key: 'k1',
  runAt: 1,
  position,
  name,
  result: JSON.stringify(name),
  recordedAt: 2,
  expiresAt: 3,
});

it('a lone step whose place is taken is refused alone: its batch commits the rest', async () => {
  const store = createSqliteStore({ database: () => openSqliteDatabase(join(dir, 'taken.db')) });
  const steps = createSqlStepStore(store);
  try {
    await steps.ready();
    assert.equal(await steps.recordAlone(step(0, 'charge')), true);
    // Two workers record the same place in one batch (a lease taken over while both ran):
    // the first wins; the second is told so, and the batch still commits the other step.
    const [first, second, other] = await Promise.all([
      steps.recordAlone(step(1, 'reserve')),
      steps.recordAlone(step(1, 'reserve-again')),
      steps.recordAlone(step(2, 'email')),
    ]);
    assert.deepEqual([first, second, other], [true, false, true]);
    assert.equal(await steps.recordAlone(step(0, 'charge')), false);
    const rows = await steps.resume('alice', 'k1', 1, 3);
    assert.deepEqual(
      rows.map((row) => [row.position, row.name]),
      [
        [0, 'charge'],
        [1, 'reserve'],
        [2, 'email'],
      ],
    );
  } finally {
    await store.close();
  }
});

it('a step after the request wrote through its own tx is refused (step_after_writes), not hung', async () => {
  const store = createSqliteStore({ database: () => openSqliteDatabase(join(dir, 'after.db')) });
  await store.write((tx) => tx.exec('CREATE TABLE orders (id TEXT NOT NULL)'));
  const ledger = createLedger({ store, steps: createSqlStepStore(store) });
  try {
    const refused = await stepAfterWrites(ledger, async (tx) => {
      await tx.begin();
      tx.run('INSERT INTO orders (id) VALUES (?)', 'o1');
    });
    assert.match(String(refused), /step "email" after the request's own statements/);
    // The request went on: its write commits with the receipt.
    const orders = await store.read(
      (tx) => tx.get<{ n: number }>('SELECT count(*) AS n FROM orders')!.n,
    );
    assert.equal(orders, 1);
    // The run had one owner: its steps went with the receipt (StepStore.forget).
    const steps = await store.read((tx) =>
      tx.all<{ name: string }>('SELECT name FROM oncely_steps'),
    );
    assert.deepEqual(steps, []);
  } finally {
    await store.close();
  }
});
