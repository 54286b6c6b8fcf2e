import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createJournal } from '#oncely/journal/index.js';
import type { JournalStore } from '#oncely/journal/journal-store.js';
import { createLedger, jsonReceipt } from '#oncely/ledger/index.js';
import { createOrmLedgerStore, transactionSql } from '#oncely/stores/orm/index.js';
import { createPostgresJournalStore } from '#oncely/stores/postgres/index.js';
import { createSqliteJournalStore, openSqliteDatabase } from '#oncely/stores/sqlite/index.js';
import { describePostgres, dropSchema, uniqueSchemaName } from './postgres-env.js';
import { tempDir } from '../support/temp-dir.js';
import {
  ORMS,
  openOrmBackend,
  sqliteTarget,
  type Orm,
  type OrmTarget,
} from '../support/orm-backends.js';

/**
 * The sender's side on an ORM: the order (the effect, written with the ORM's builder), the
 * webhook it owes (journal.recordWithin) and the receipt commit together or not at all, whether
 * recordWithin is given the route's ORM transaction itself or its SQL handle (context.sql).
 */
const TARGET = 'https://hooks.example.test/orders';

function outboxSuite(
  orm: Orm,
  name: string,
  target: () => OrmTarget,
  journalStore: (t: OrmTarget) => { store: JournalStore<unknown>; close(): Promise<void> },
  skip?: string,
): void {
  describe(`outbox: ${orm} on ${name}`, { skip: skip ?? false }, () => {
    it('the order, its intent and the receipt commit in one transaction, or none of them', async () => {
      const t = target();
      const backend = await openOrmBackend(orm, t);
      const store = createOrmLedgerStore({
        executor: backend.executor,
        ...(t.db === 'postgres' ? { schema: t.schema } : {}),
      });
      const intents = journalStore(t);
      const journal = createJournal({ store: intents.store });
      const ledger = createLedger({ store });
      try {
        await intents.store.ready();
        const place = (key: string, how: 'tx' | 'sql', fail = false) =>
          ledger.execute({ scope: 'shop', key, fingerprint: 'fp' }, async (tx) => {
            await backend.writeEffect(tx, key);
            const within = how === 'tx' ? tx : store.sql(tx);
            await journal.recordWithin(within, { key: `hook-${key}`, target: TARGET, body: '{}' });
            if (fail) throw new Error('payment declined');
            return jsonReceipt(201, { key });
          });
        assert.equal((await place('o-tx', 'tx')).kind, 'executed');
        assert.equal((await place('o-sql', 'sql')).kind, 'executed');
        await assert.rejects(place('o-failed', 'tx', true), /payment declined/);
        assert.deepEqual((await journal.list({ limit: 10 })).map((i) => i.key).sort(), [
          'hook-o-sql',
          'hook-o-tx',
        ]);
        assert.deepEqual((await backend.effectIds()).sort(), ['o-sql', 'o-tx']);
        assert.equal((await ledger.lookup('shop', 'o-failed')).kind, 'never_seen');

        let kept: unknown;
        await ledger.execute({ scope: 'shop', key: 'o-kept', fingerprint: 'fp' }, async (tx) => {
          kept = tx;
          return jsonReceipt(201, {});
        });
        await assert.rejects(
          async () => journal.recordWithin(kept, { key: 'hook-late', target: TARGET, body: '{}' }),
          /transaction ended/,
        );
        assert.equal(await intents.store.get('hook-late'), undefined);
      } finally {
        await intents.close();
        await backend.close();
      }
    });

    it("the app's own ORM transaction: order and intent commit together; the base client is refused", async () => {
      const t = target();
      const backend = await openOrmBackend(orm, t);
      const intents = journalStore(t);
      const journal = createJournal({ store: intents.store });
      const { executor } = backend;
      try {
        await intents.store.ready();
        // Not inside a transaction: the intent would commit apart from the order.
        assert.throws(() => transactionSql(executor, backend.client), /not an open transaction/);
        if (orm === 'drizzle' && t.db === 'sqlite') return; // synchronous transactions only
        const place = (key: string, fail: boolean) =>
          executor.transaction(async (trx) => {
            await backend.writeEffect(trx, key);
            await journal.recordWithin(transactionSql(executor, trx), {
              key: `hook-${key}`,
              target: TARGET,
              body: '{}',
            });
            if (fail) throw new Error('payment declined');
          });
        await place('own-1', false);
        await assert.rejects(place('own-2', true), /payment declined/);
        assert.deepEqual(
          (await journal.list({ limit: 10 })).map((i) => i.key),
          ['hook-own-1'],
        );
        assert.deepEqual(await backend.effectIds(), ['own-1']);
      } finally {
        await intents.close();
        await backend.close();
      }
    });
  });
}

const dir = tempDir('oncely-orm-outbox-');
let n = 0;
for (const orm of ORMS)
  outboxSuite(
    orm,
    'sqlite',
    () => sqliteTarget(dir, `outbox-${orm}-${++n}`),
    (t) => {
      const store = createSqliteJournalStore({
        database: () => openSqliteDatabase(t.db === 'sqlite' ? t.file : ''),
      });
      return { store: store as JournalStore<unknown>, close: () => store.close() };
    },
  );

await describePostgres('the ORM outbox', ({ url, options }) => {
  const schemas: string[] = [];
  after(async () => {
    for (const schema of schemas) await dropSchema(url, schema);
  });
  for (const orm of ORMS)
    outboxSuite(
      orm,
      'postgres',
      () => {
        const schema = uniqueSchemaName(`oncely_orm_outbox_${orm}`);
        schemas.push(schema);
        return { db: 'postgres', url, schema };
      },
      (t) => {
        const pool = new pg.Pool({ connectionString: url, max: 2 });
        const schema = t.db === 'postgres' ? t.schema : undefined;
        const store = createPostgresJournalStore({ pool, schema });
        return {
          store: store as JournalStore<unknown>,
          close: async () => {
            await store.close();
            await pool.end();
          },
        };
      },
      options.skip,
    );
});
