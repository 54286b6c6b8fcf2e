// TypeORM's executor beyond the shared suites (conformance, crash, race, outbox, misuse run it
// with the other ORMs): what it refuses at construction, and, on better-sqlite3, where TypeORM has
// one query runner for the whole DataSource, that one request's transaction never takes in
// another's statements (TypeORM would nest a second transaction in the first as a savepoint).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DataSource } from 'typeorm';
import { createLedger, jsonReceipt } from '#oncely/ledger/index.js';
import { createOrmLedgerStore } from '#oncely/stores/orm/index.js';
import { typeormExecutor } from '#oncely/stores/orm/typeorm/index.js';
import { openOrmBackend, sqliteTarget } from '../support/orm-backends.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('oncely-typeorm-');
let n = 0;

describe('typeormExecutor', () => {
  it('refuses what is not an initialized DataSource of postgres or better-sqlite3', async () => {
    const backend = await openOrmBackend('typeorm', sqliteTarget(dir, `refuse-${++n}`));
    try {
      const unready = new DataSource({ type: 'better-sqlite3', database: ':memory:' });
      assert.throws(() => typeormExecutor(unready), /await dataSource.initialize\(\) first/);
      const mysql = {
        isInitialized: true,
        options: { type: 'mysql' },
        transaction: () => undefined,
        createQueryRunner: () => undefined,
      };
      assert.throws(
        () => typeormExecutor(mysql as unknown as DataSource),
        /a DataSource of type postgres or better-sqlite3/,
      );
      await backend.executor.transaction(async (manager) => {
        assert.throws(() => typeormExecutor(manager as DataSource), /a TypeORM DataSource/);
      });
    } finally {
      await backend.close();
    }
  });

  it("on SQLite, a request's transaction holds the connection: another's claim and effect wait, and commit apart", async () => {
    const backend = await openOrmBackend('typeorm', sqliteTarget(dir, `turns-${++n}`));
    const ledger = createLedger({ store: createOrmLedgerStore({ executor: backend.executor }) });
    try {
      let written!: () => void;
      const aWrote = new Promise<void>((resolve) => (written = resolve));
      let fail!: () => void;
      const aFails = new Promise<void>((resolve) => (fail = resolve));
      const a = ledger.execute({ scope: 's', key: 'a', fingerprint: 'f' }, async (tx) => {
        await backend.writeEffect(tx, 'a');
        written();
        await aFails;
        throw new Error('payment declined');
      });
      await aWrote;
      // B begins while A's transaction is open; it commits only after A rolled back.
      const b = ledger.execute({ scope: 's', key: 'b', fingerprint: 'f' }, async (tx) => {
        await backend.writeEffect(tx, 'b');
        return jsonReceipt(201, {});
      });
      fail();
      await assert.rejects(a, /payment declined/);
      assert.equal((await b).kind, 'executed');
      assert.deepEqual(await backend.effectIds(), ['b']);
      assert.equal((await ledger.lookup('s', 'a')).kind, 'never_seen');
      assert.equal((await ledger.lookup('s', 'b')).kind, 'found');
    } finally {
      await backend.close();
    }
  });
});
