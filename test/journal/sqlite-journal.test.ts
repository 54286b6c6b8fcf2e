import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import {
  createSqliteJournalStore,
  openSqliteDatabase,
  type SqliteJournalTx,
} from '../../src/stores/sqlite/index.js';
import { runJournalConformance } from './journal-conformance.js';

const dir = mkdtempSync(join(tmpdir(), 'oncely-journal-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

runJournalConformance<SqliteJournalTx>('sqlite', async () => {
  // The app's own connection on the same file: its transaction is where recordWithin writes.
  const file = join(dir, `journal-${++n}.db`);
  const store = createSqliteJournalStore({ database: () => openSqliteDatabase(file) });
  const app = openSqliteDatabase(file);
  app.pragma('busy_timeout = 5000');
  app.exec('CREATE TABLE IF NOT EXISTS orders (id TEXT NOT NULL)');
  return {
    store,
    appTransaction: async (fn) => {
      app.exec('BEGIN IMMEDIATE');
      try {
        await fn(app);
        app.exec('COMMIT');
      } catch (error) {
        app.exec('ROLLBACK');
        throw error;
      }
    },
    writeOrder: async (tx, id) =>
      void (tx as typeof app).prepare('INSERT INTO orders (id) VALUES (?)').run(id),
    countOrders: async () =>
      (app.prepare('SELECT count(*) AS n FROM orders').get() as { n: number }).n,
    close: async () => {
      await store.close();
      app.close();
    },
  };
});
