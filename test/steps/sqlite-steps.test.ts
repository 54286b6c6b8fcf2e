import { join } from 'node:path';
import {
  createSqliteStore,
  createSqlStepStore,
  openSqliteDatabase,
  type SqliteTx,
} from '#oncely/stores/sqlite/index.js';
import { runStepsConformance } from './steps-conformance.js';
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
    close: () => store.close(),
  };
});
