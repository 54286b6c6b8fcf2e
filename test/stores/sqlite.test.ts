import { join } from 'node:path';
import {
  createSqliteStore,
  openSqliteDatabase,
  type SqliteTx,
} from '#oncely/stores/sqlite/index.js';
import { runLedgerConformance } from './conformance.js';
import { tempDir } from '../support/temp-dir.js';

// Real files, so WAL, group commit and the read connection are what is tested (":memory:" has no WAL).
const dir = tempDir('oncely-sqlite-');
let n = 0;

runLedgerConformance<SqliteTx>('sqlite', async () => {
  const file = join(dir, `ledger-${++n}.db`);
  const store = createSqliteStore({ database: () => openSqliteDatabase(file) });
  await store.write((tx) => tx.exec('CREATE TABLE IF NOT EXISTS effects (id TEXT NOT NULL)'));
  return {
    store,
    writeEffect: async (tx, id) => {
      await tx.begin();
      tx.run('INSERT INTO effects (id) VALUES (?)', id);
    },
    countEffects: (id) =>
      store.read(
        (tx) => tx.get<{ n: number }>('SELECT count(*) AS n FROM effects WHERE id = ?', id)!.n,
      ),
    close: () => store.close(),
  };
});
