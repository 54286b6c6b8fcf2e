// The route's ORM transaction, as the compiler sees it: typed as the ORM's own (Kysely's
// Transaction, Knex's trx, Drizzle's tx or database) on the adapters (idempotencyOf on Express,
// Fastify and node:http; context.tx) and taken without a cast by journal.recordWithin of either
// SQL journal store, which refuses the ORM's base client in types too. A type error here fails
// the build; the SQLite runs check that what compiles also commits the intent with the order.
// (Prisma's generated client is typed the same way in examples/express-prisma, compiled and run
// by test/http/express-prisma-example.test.ts.)
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle as drizzleSqlite, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import knexFactory, { type Knex } from 'knex';
import { Kysely, SqliteDialect, type Transaction } from 'kysely';
import type { FastifyRequest } from 'fastify';
import { idempotencyOf as expressIdempotencyOf } from '#oncely/http/express/index.js';
import { idempotencyOf as fastifyIdempotencyOf } from '#oncely/http/fastify/index.js';
import { idempotencyOf as nodeIdempotencyOf } from '#oncely/http/node/index.js';
import { createJournal, type Journal } from '#oncely/journal/index.js';
import { createLedger, jsonReceipt, type Ledger } from '#oncely/ledger/index.js';
import type { CarriesSqlHandle } from '#oncely/ledger/sql-handle.js';
import { createOrmLedgerStore } from '#oncely/stores/orm/index.js';
import { drizzlePgExecutor, drizzleSqliteExecutor } from '#oncely/stores/orm/drizzle/index.js';
import { knexExecutor } from '#oncely/stores/orm/knex/index.js';
import { kyselyExecutor } from '#oncely/stores/orm/kysely/index.js';
import type { createPostgresJournalStore } from '#oncely/stores/postgres/index.js';
import { createSqliteJournalStore } from '#oncely/stores/sqlite/index.js';
import { tempDir } from '../support/temp-dir.js';

/** True when A and B are the same type (not merely assignable either way). */
type Equal<A, B> =
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const sameType = <_ extends true>(): void => undefined;

interface Shop {
  orders: { id: string };
}
const INTENT = { target: 'https://hooks.example.test/orders', body: '{}' };
type PostgresJournal = Journal<
  ReturnType<typeof createPostgresJournalStore> extends {
    recordWithin(tx: infer T, i: never): unknown;
  }
    ? T
    : never
>;

/**
 * Compiled, never called: the types of the route's transaction on every adapter, and the
 * PostgreSQL journal taking it.
 */
export function routeTransactionTypes(
  kysely: Kysely<Shop>,
  drizzlePg: NodePgDatabase,
  journal: PostgresJournal,
  request: object & FastifyRequest,
): void {
  const ledger = createLedger({
    store: createOrmLedgerStore({ executor: kyselyExecutor(kysely, { dialect: 'postgres' }) }),
  });
  type Route = Transaction<Shop> & CarriesSqlHandle;
  sameType<Equal<NonNullable<ReturnType<typeof expressIdempotencyOf<Route>>>['tx'], Route>>();
  const fromExpress = expressIdempotencyOf(request, ledger)!.tx;
  const fromFastify = fastifyIdempotencyOf(request, ledger)!.tx;
  const fromNode = nodeIdempotencyOf(request, ledger)!.tx;
  sameType<Equal<typeof fromExpress, Route>>();
  sameType<Equal<typeof fromFastify, Route>>();
  sameType<Equal<typeof fromNode, Route>>();
  // Fastify's own declaration serves every plugin of the app: its tx stays unknown.
  sameType<Equal<NonNullable<typeof request.idempotency>['tx'], unknown>>();
  void journal.recordWithin(fromFastify, { key: 'k', ...INTENT });
  // @ts-expect-error the ORM's base client writes apart from the order: refused
  void journal.recordWithin(kysely, { key: 'k', ...INTENT });

  const drizzleLedger = createLedger({
    store: createOrmLedgerStore({ executor: drizzlePgExecutor(drizzlePg) }),
  });
  void drizzleLedger.execute({ scope: 's', key: 'k', fingerprint: 'f' }, async (tx) => {
    type DrizzleTx = Parameters<Parameters<NodePgDatabase['transaction']>[0]>[0];
    sameType<Equal<typeof tx, DrizzleTx & CarriesSqlHandle>>();
    await journal.recordWithin(tx, { key: 'k', ...INTENT });
    return jsonReceipt(201, {});
  });
  // @ts-expect-error the ORM's base client writes apart from the order: refused
  void journal.recordWithin(drizzlePg, { key: 'k', ...INTENT });
}

const dir = tempDir('oncely-orm-types-');
let n = 0;

/**
 * One SQLite file: the ORM's ledger and a journal on it; `route` runs inside a keyed request
 * with the typed transaction and the journal. Resolves with the intents' keys once it committed.
 */
async function onSqlite<Tx>(
  open: (file: string) => { ledger: Ledger<Tx>; close(): Promise<void> },
  route: (tx: Tx, journal: Journal<CarriesSqlHandle>) => Promise<void>,
): Promise<string[]> {
  const file = join(dir, `types-${++n}.db`);
  const { ledger, close } = open(file);
  const database = new Database(file);
  const journal = createJournal<CarriesSqlHandle>({
    store: createSqliteJournalStore({ database }),
  });
  try {
    await journal.store.ready();
    await ledger.execute({ scope: 's', key: 'k-1', fingerprint: 'f' }, async (tx) => {
      await route(tx, journal);
      return jsonReceipt(201, {});
    });
    return (await journal.list()).map((i) => i.key);
  } finally {
    await journal.store.close();
    await close();
  }
}

describe("journal.recordWithin takes the route's ORM transaction as it is", () => {
  it("Kysely's Transaction", async () => {
    const keys = await onSqlite(
      (file) => {
        const db = new Kysely<Shop>({
          dialect: new SqliteDialect({ database: new Database(file) }),
        });
        const store = createOrmLedgerStore({ executor: kyselyExecutor(db, { dialect: 'sqlite' }) });
        return { ledger: createLedger({ store }), close: () => db.destroy() };
      },
      async (tx, journal) => {
        sameType<Equal<typeof tx, Transaction<Shop> & CarriesSqlHandle>>();
        await journal.recordWithin(tx, { key: 'kysely', ...INTENT });
      },
    );
    assert.deepEqual(keys, ['kysely']);
  });

  it("Knex's trx", async () => {
    const keys = await onSqlite(
      (file) => {
        const knex = knexFactory({
          client: 'better-sqlite3',
          connection: { filename: file },
          useNullAsDefault: true,
        });
        const store = createOrmLedgerStore({ executor: knexExecutor(knex) });
        return { ledger: createLedger({ store }), close: () => knex.destroy() };
      },
      async (tx, journal) => {
        sameType<Equal<typeof tx, Knex.Transaction & CarriesSqlHandle>>();
        await journal.recordWithin(tx, { key: 'knex', ...INTENT });
      },
    );
    assert.deepEqual(keys, ['knex']);
  });

  it("Drizzle's database on better-sqlite3", async () => {
    const keys = await onSqlite(
      (file) => {
        const client = new Database(file);
        const store = createOrmLedgerStore({
          executor: drizzleSqliteExecutor(drizzleSqlite(client)),
        });
        return { ledger: createLedger({ store }), close: async () => void client.close() };
      },
      async (tx, journal) => {
        // drizzle() adds the driver's client to the database object.
        type Db = BetterSQLite3Database & { $client: Database.Database };
        sameType<Equal<typeof tx, Db & CarriesSqlHandle>>();
        await journal.recordWithin(tx, { key: 'drizzle', ...INTENT });
      },
    );
    assert.deepEqual(keys, ['drizzle']);
  });
});
