/**
 * One ORM on one database, as bench/orm's server uses it: the ORM's own client (the app's only
 * pool) and its executor (bench/orm-clients.ts), and an order written through the ORM's own
 * builder, either on its base client (the route without oncely: one INSERT that commits by
 * itself) or on the guarded route's transaction object (the order commits with the receipt).
 */
import { fileURLToPath } from 'node:url';
import { integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import {
  integer as sqliteInteger,
  primaryKey as sqlitePrimaryKey,
  sqliteTable,
  text as sqliteText,
} from 'drizzle-orm/sqlite-core';
import type { Knex } from 'knex';
import type { Transaction } from 'kysely';
import type { SqlExecutor } from 'oncely/orm';
import { EntitySchema, type EntityManager } from 'typeorm';
import {
  openDrizzle,
  openKnex,
  openKysely,
  openPrisma,
  openTypeorm,
  type OpenOptions,
  type Orm,
  type OrmTarget,
  type PrismaClientLike,
} from './orm-clients.js';
import { generatePrismaClient } from './prisma-generate.js';

export interface Order {
  readonly caller: string;
  readonly key: string;
  readonly item: string;
  readonly qty: number;
}

export interface OrmApp {
  readonly executor: SqlExecutor<unknown>;
  /** The route without oncely: the order through the ORM's base client. */
  insert(order: Order): Promise<void>;
  /** The guarded route: the order through the transaction object oncely hands it. */
  insertIn(tx: unknown, order: Order): Promise<void>;
  close(): Promise<void>;
}

export const ORDERS_DDL =
  'CREATE TABLE IF NOT EXISTS orders (caller TEXT NOT NULL, key TEXT NOT NULL, item TEXT NOT NULL, qty INTEGER NOT NULL, PRIMARY KEY (caller, key))';

/** Every app's commits are durable: SQLite fsyncs at each one. */
export async function openOrmApp(orm: Orm, target: OrmTarget, poolSize: number): Promise<OrmApp> {
  const app = await OPENERS[orm](target, { poolSize, durable: true });
  await app.executor.query(ORDERS_DDL, []);
  return app;
}

interface OrdersDb {
  orders: Order;
}

const OPENERS: Record<Orm, (t: OrmTarget, options: OpenOptions) => Promise<OrmApp>> = {
  async kysely(target, options) {
    const { client: db, executor, close } = await openKysely<OrdersDb>(target, options);
    return {
      executor,
      insert: async (order) => void (await db.insertInto('orders').values(order).execute()),
      insertIn: async (tx, order) =>
        void (await (tx as Transaction<OrdersDb>).insertInto('orders').values(order).execute()),
      close,
    };
  },

  async knex(target, options) {
    const { client: knex, executor, close } = await openKnex(target, options);
    return {
      executor,
      insert: async (order) => void (await knex('orders').insert(order)),
      insertIn: async (tx, order) => void (await (tx as Knex.Transaction)('orders').insert(order)),
      close,
    };
  },

  async drizzle(target, options) {
    const opened = await openDrizzle(target, options);
    if (opened.dialect === 'sqlite') {
      const orders = sqliteTable(
        'orders',
        {
          caller: sqliteText().notNull(),
          key: sqliteText().notNull(),
          item: sqliteText().notNull(),
          qty: sqliteInteger().notNull(),
        },
        (t) => [sqlitePrimaryKey({ columns: [t.caller, t.key] })],
      );
      const db = opened.client;
      return {
        executor: opened.executor,
        insert: async (order) => void (await db.insert(orders).values(order)),
        insertIn: async (tx, order) => void (await (tx as typeof db).insert(orders).values(order)),
        close: opened.close,
      };
    }
    const orders = pgTable(
      'orders',
      { caller: text().notNull(), key: text().notNull(), item: text().notNull(), qty: integer() },
      (t) => [primaryKey({ columns: [t.caller, t.key] })],
    );
    const db = opened.client;
    type Tx = Parameters<Parameters<typeof db.transaction>[0]>[0];
    return {
      executor: opened.executor,
      insert: async (order) => void (await db.insert(orders).values(order)),
      insertIn: async (tx, order) => void (await (tx as Tx).insert(orders).values(order)),
      close: opened.close,
    };
  },

  async typeorm(target, options) {
    const { client, executor, close } = await openTypeorm(target, options, [TypeormOrder]);
    return {
      executor,
      insert: async (order) => void (await client.manager.insert(TypeormOrder, order)),
      insertIn: async (tx, order) => void (await (tx as EntityManager).insert(TypeormOrder, order)),
      close,
    };
  },

  async prisma(target, options) {
    const provider = target.db === 'sqlite' ? 'sqlite' : 'postgresql';
    const dir = fileURLToPath(new URL(`./.prisma/${process.pid}-${provider}`, import.meta.url));
    const module = await generatePrismaClient(prismaSchema(provider), dir);
    const { client, executor, close } = await openPrisma<BenchPrisma>(module, target, options);
    return {
      executor,
      insert: async (order) => void (await client.order.create({ data: order })),
      insertIn: async (tx, order) => void (await (tx as BenchPrisma).order.create({ data: order })),
      close,
    };
  },
};

const TypeormOrder = new EntitySchema<Order>({
  name: 'Order',
  tableName: 'orders',
  columns: {
    caller: { type: String, primary: true },
    key: { type: String, primary: true },
    item: { type: String },
    qty: { type: Number },
  },
});

/** The orders table as Prisma sees it (made with plain SQL, never migrated). */
const prismaSchema = (provider: 'postgresql' | 'sqlite'): string => `
generator client {
  provider            = "prisma-client"
  output              = "./generated"
  moduleFormat        = "esm"
  importFileExtension = "js"
}
datasource db {
  provider = "${provider}"
}
model Order {
  caller String
  key    String
  item   String
  qty    Int
  @@id([caller, key])
  @@map("orders")
}
`;

type BenchPrisma = PrismaClientLike & {
  order: { create(args: { data: Order }): Promise<unknown> };
};
