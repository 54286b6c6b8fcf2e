import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Knex } from 'knex';
import pg from 'pg';
import { createIdempotencyMiddleware, withIdempotency } from '#oncely/http/index.js';
import { createLedger } from '#oncely/ledger/index.js';
import { createOrmLedgerStore } from '#oncely/stores/orm/index.js';
import { kyselyExecutor } from '#oncely/stores/orm/kysely/index.js';
import { knexExecutor } from '#oncely/stores/orm/knex/index.js';
import { peerLoader } from '#oncely/stores/orm/load-peer.js';
import { describePostgres, dropSchema, uniqueSchemaName } from './postgres-env.js';
import { tempDir } from '../support/temp-dir.js';
import { ORMS, openOrmBackend, sqliteTarget } from '../support/orm-backends.js';

const dir = tempDir('oncely-orm-misuse-');
let n = 0;
const ok = { status: 201, headers: [], body: new Uint8Array() } as const;
const request = (key: string) => ({ scope: 'alice', key, fingerprint: 'f'.repeat(64) });

async function sqliteStore(orm: (typeof ORMS)[number]) {
  const backend = await openOrmBackend(orm, sqliteTarget(dir, `misuse-${++n}`));
  const store = createOrmLedgerStore({ executor: backend.executor });
  return { backend, store, ledger: createLedger({ store }) };
}

describe('an ORM transaction used wrongly is refused, never committed on its own', () => {
  it("refuses a handle the store did not give: the ORM's base client, another store's transaction", async () => {
    const a = await sqliteStore('kysely');
    const b = await sqliteStore('kysely');
    try {
      const stray: unknown[] = [];
      await a.ledger.execute(request('k-1'), async (tx) => {
        // The app's Kysely instance itself (not inside the transaction), and a transaction on
        // another database: neither is this ledger's transaction.
        assert.throws(
          // @ts-expect-error the base client is no route transaction, in types too
          () => a.store.sql(a.backend.client),
          /not a transaction handle of this ledger store/,
        );
        await b.store.transaction(async (other) => {
          assert.throws(() => a.store.sql(other), /not a transaction handle of this ledger store/);
          stray.push(other);
        });
        await a.backend.writeEffect(tx, 'mine');
        return ok;
      });
      assert.equal(await a.backend.countEffects('mine'), 1);
      assert.equal(stray.length, 1);
    } finally {
      await a.backend.close();
      await b.backend.close();
    }
  });

  it('refuses context.sql and the handle once the transaction ended', async () => {
    const { backend, store, ledger } = await sqliteStore('kysely');
    try {
      let kept: Parameters<typeof store.sql>[0] | undefined;
      await ledger.execute(request('k-2'), async (tx) => {
        kept = tx;
        await store.sql(tx).run('INSERT INTO effects (id, n) VALUES ($1, 1)', ['inside']);
        return ok;
      });
      await assert.rejects(
        () => store.sql(kept!).run('INSERT INTO effects (id, n) VALUES ($1, 1)', ['late']),
        /transaction ended/,
      );
      assert.throws(
        () => (kept as unknown as { insertInto: unknown }).insertInto,
        /transaction ended/,
      );
      assert.equal(await backend.countEffects('inside'), 1);
      assert.equal(await backend.countEffects('late'), 0);
    } finally {
      await backend.close();
    }
  });

  it("refuses Knex's commit() on the route's transaction: the effect rolls back, the key is free", async () => {
    const { backend, ledger } = await sqliteStore('knex');
    try {
      const outcome = await ledger
        .execute(request('k-3'), async (tx) => {
          await backend.writeEffect(tx, 'early');
          await (tx as unknown as Knex.Transaction).commit();
          return ok;
        })
        .catch((error: Error) => error.message);
      assert.match(String(outcome), /commit\(\) is refused/);
      assert.equal(await backend.countEffects('early'), 0);
      const again = await ledger.execute(request('k-3'), async (tx) => {
        await backend.writeEffect(tx, 'again');
        return ok;
      });
      assert.equal(again.kind, 'executed');
    } finally {
      await backend.close();
    }
  });

  it('refuses an executor built on a transaction instead of the client', async () => {
    const { backend } = await sqliteStore('kysely');
    try {
      await backend.executor.transaction(async (trx) => {
        assert.throws(
          () => kyselyExecutor(trx as never, { dialect: 'sqlite' }),
          /the Kysely instance itself/,
        );
      });
      await assert.rejects(async () => {
        const knex = (await import('knex')).default({
          client: 'better-sqlite3',
          connection: { filename: ':memory:' },
          useNullAsDefault: true,
        });
        try {
          await knex.transaction(async (trx) => void knexExecutor(trx));
        } finally {
          await knex.destroy();
        }
      }, /the Knex instance itself/);
    } finally {
      await backend.close();
    }
  });

  it('a transaction that cannot begin fails its first statement: 503, the key free, no stray rejection', async () => {
    const { backend } = await sqliteStore('kysely');
    try {
      const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
      // Its tables are set up; from then on no transaction can begin (the file stays locked).
      let locked = false;
      const failing = createOrmLedgerStore({
        executor: {
          ...backend.executor,
          transaction: <T>(fn: (tx: unknown) => Promise<T>) =>
            locked ? Promise.reject<T>(busy) : backend.executor.transaction(fn),
        },
      });
      await failing.ready();
      locked = true;
      const ledger = createLedger({ store: failing });
      const result = await ledger.execute(request('k-begin'), async (tx) => {
        await backend.writeEffect(tx, 'never');
        return ok;
      });
      assert.deepEqual(result, { kind: 'unavailable', stage: 'transaction', cause: busy });
      assert.equal((await ledger.lookup('alice', 'k-begin')).kind, 'never_seen');
      assert.equal(await backend.countEffects('never'), 0);
    } finally {
      await backend.close();
    }
  });

  it('a missing ORM is one line naming the package to install', async () => {
    const load = peerLoader(
      'not-an-orm-oncely',
      'oncely/orm/x',
      () => import('not-an-orm-oncely' as string),
    );
    await assert.rejects(load(), {
      code: 'missing_peer',
      message: 'oncely/orm/x needs the package not-an-orm-oncely: npm install not-an-orm-oncely',
    });
  });
});

await describePostgres('an ORM whose connection dies', ({ url, options }) => {
  const schemas: string[] = [];
  after(async () => {
    for (const schema of schemas) await dropSchema(url, schema);
  });
  for (const orm of ORMS) {
    it(
      `${orm}: a connection ended under the route answers 503 + Retry-After, not 500`,
      options,
      async () => {
        const schema = uniqueSchemaName(`oncely_orm_dies_${orm}`);
        schemas.push(schema);
        const backend = await openOrmBackend(orm, { db: 'postgres', url, schema });
        const store = createOrmLedgerStore({ executor: backend.executor, schema });
        const killer = new pg.Client({ connectionString: url });
        await killer.connect();
        try {
          const ledger = createLedger({ store });
          await ledger.ready();
          const handle = withIdempotency(
            createIdempotencyMiddleware({ ledger, scopeOf: () => 'alice' }),
            async (_request, context) => {
              const sql = store.sql(context!.tx);
              const { pid } = (await sql.get<{ pid: number }>('SELECT pg_backend_pid() AS pid'))!;
              // The server ends this very connection, as a stop of PostgreSQL does.
              await killer.query('SELECT pg_terminate_backend($1)', [pid]);
              await backend.writeEffect(context!.tx, 'lost');
              return new Response('made', { status: 201 });
            },
          );
          const response = await handle(
            new Request('http://shop.test/orders', {
              method: 'POST',
              headers: { 'idempotency-key': 'k-dies' },
              body: '{}',
            }),
          );
          assert.equal(response.status, 503);
          assert.ok(Number(response.headers.get('retry-after')) > 0, 'Retry-After');
          assert.equal(await backend.countEffects('lost'), 0);
        } finally {
          await killer.end();
          await backend.close();
        }
      },
    );
  }
});
