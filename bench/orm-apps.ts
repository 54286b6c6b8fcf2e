/**
 * One ORM on one database, as bench/orm's server uses it: the ORM's own client (the app's only
 * pool), an executor over it, and an order written through the ORM's own builder, either on its
 * base client (the route without oncely: one INSERT that commits by itself) or on the guarded
 * route's transaction object (the order commits with the receipt).
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { drizzle as drizzleSqlite } from 'drizzle-orm/better-sqlite3';
import { integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import {
  integer as sqliteInteger,
  primaryKey as sqlitePrimaryKey,
  sqliteTable,
  text as sqliteText,
} from 'drizzle-orm/sqlite-core';
import knexFactory, { type Knex } from 'knex';
import { Kysely, PostgresDialect, SqliteDialect, type Transaction } from 'kysely';
import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import type { SqlExecutor } from 'oncely/orm';
import { drizzlePgExecutor, drizzleSqliteExecutor } from 'oncely/orm/drizzle';
import { knexExecutor } from 'oncely/orm/knex';
import { kyselyExecutor } from 'oncely/orm/kysely';
import { prismaExecutor, type PrismaLike } from 'oncely/orm/prisma';
import { typeormExecutor } from 'oncely/orm/typeorm';
import { DataSource, EntitySchema, type EntityManager } from 'typeorm';
import { generatePrismaClient } from './prisma-generate.js';

export const BENCH_ORMS = ['kysely', 'knex', 'drizzle', 'prisma', 'typeorm'] as const;
export type BenchOrm = (typeof BENCH_ORMS)[number];
export const BENCH_DATABASES = ['postgres', 'sqlite'] as const;
export type BenchDatabase = (typeof BENCH_DATABASES)[number];

/** Where the tables go: a SQLite file, or a PostgreSQL URL and a schema of its own. */
export type BenchTarget =
  | { readonly db: 'sqlite'; readonly file: string }
  | { readonly db: 'postgres'; readonly url: string; readonly schema: string };

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

/** A better-sqlite3 connection as an app opens one: WAL, fsync at every commit ('durable'). */
export function benchSqlite(file: string): Database.Database {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
  return db;
}

/** A pool whose connections work in the target's schema. */
export function benchPool(url: string, schema: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, options: `-c search_path=${schema}` });
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

export async function openOrmApp(
  orm: BenchOrm,
  target: BenchTarget,
  poolSize: number,
): Promise<OrmApp> {
  const app = await OPENERS[orm](target, poolSize);
  await app.executor.query(ORDERS_DDL, []);
  return app;
}

interface OrdersDb {
  orders: Order;
}

const OPENERS: Record<BenchOrm, (t: BenchTarget, poolSize: number) => Promise<OrmApp>> = {
  async kysely(target, poolSize) {
    const db = new Kysely<OrdersDb>({
      dialect:
        target.db === 'sqlite'
          ? new SqliteDialect({ database: benchSqlite(target.file) })
          : new PostgresDialect({ pool: benchPool(target.url, target.schema, poolSize) }),
    });
    return {
      executor: kyselyExecutor(db, { dialect: target.db }) as SqlExecutor<unknown>,
      insert: async (order) => void (await db.insertInto('orders').values(order).execute()),
      insertIn: async (tx, order) =>
        void (await (tx as Transaction<OrdersDb>).insertInto('orders').values(order).execute()),
      close: () => db.destroy(),
    };
  },

  async knex(target, poolSize) {
    const knex: Knex =
      target.db === 'sqlite'
        ? knexFactory({
            client: 'better-sqlite3',
            connection: { filename: target.file },
            useNullAsDefault: true,
            pool: {
              afterCreate: (conn: Database.Database, done: (e: unknown, c: unknown) => void) => {
                conn.pragma('journal_mode = WAL');
                conn.pragma('synchronous = FULL');
                done(null, conn);
              },
            },
          })
        : knexFactory({
            client: 'pg',
            connection: { connectionString: target.url },
            searchPath: [target.schema],
            pool: { min: 0, max: poolSize },
          });
    return {
      executor: knexExecutor(knex) as SqlExecutor<unknown>,
      insert: async (order) => void (await knex('orders').insert(order)),
      insertIn: async (tx, order) => void (await (tx as Knex.Transaction)('orders').insert(order)),
      close: () => knex.destroy(),
    };
  },

  async drizzle(target, poolSize) {
    if (target.db === 'sqlite') {
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
      const client = benchSqlite(target.file);
      const db = drizzleSqlite(client);
      return {
        executor: drizzleSqliteExecutor(db) as SqlExecutor<unknown>,
        insert: async (order) => void (await db.insert(orders).values(order)),
        insertIn: async (tx, order) => void (await (tx as typeof db).insert(orders).values(order)),
        close: async () => void client.close(),
      };
    }
    const orders = pgTable(
      'orders',
      { caller: text().notNull(), key: text().notNull(), item: text().notNull(), qty: integer() },
      (t) => [primaryKey({ columns: [t.caller, t.key] })],
    );
    const pool = benchPool(target.url, target.schema, poolSize);
    const db = drizzlePg(pool);
    type Tx = Parameters<Parameters<typeof db.transaction>[0]>[0];
    return {
      executor: drizzlePgExecutor(db) as SqlExecutor<unknown>,
      insert: async (order) => void (await db.insert(orders).values(order)),
      insertIn: async (tx, order) => void (await (tx as Tx).insert(orders).values(order)),
      close: () => pool.end(),
    };
  },
  prisma: openPrisma,
  typeorm: openTypeorm,
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

async function openTypeorm(target: BenchTarget, poolSize: number): Promise<OrmApp> {
  const dataSource = new DataSource(
    target.db === 'sqlite'
      ? {
          type: 'better-sqlite3',
          database: target.file,
          entities: [TypeormOrder],
          prepareDatabase: (db: Database.Database) => {
            db.pragma('journal_mode = WAL');
            db.pragma('synchronous = FULL');
          },
        }
      : {
          type: 'postgres',
          url: target.url,
          // TypeORM reads the URL's host, user and database only.
          applicationName: new URL(target.url).searchParams.get('application_name') ?? 'typeorm',
          schema: target.schema,
          entities: [TypeormOrder],
          extra: { max: poolSize, options: `-c search_path=${target.schema}` },
        },
  );
  await dataSource.initialize();
  return {
    executor: typeormExecutor(dataSource) as SqlExecutor<unknown>,
    insert: async (order) => void (await dataSource.manager.insert(TypeormOrder, order)),
    insertIn: async (tx, order) => void (await (tx as EntityManager).insert(TypeormOrder, order)),
    close: () => dataSource.destroy(),
  };
}

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

type BenchPrisma = PrismaLike & {
  order: { create(args: { data: Order }): Promise<unknown> };
  $disconnect(): Promise<void>;
};

async function openPrisma(target: BenchTarget, poolSize: number): Promise<OrmApp> {
  const provider = target.db === 'sqlite' ? 'sqlite' : 'postgresql';
  const dir = fileURLToPath(new URL(`./.prisma/${process.pid}-${provider}`, import.meta.url));
  const file = await generatePrismaClient(prismaSchema(provider), dir);
  const { PrismaClient } = (await import(pathToFileURL(file).href)) as {
    PrismaClient: new (options: { adapter: unknown }) => BenchPrisma;
  };
  const adapter =
    target.db === 'sqlite'
      ? new PrismaBetterSqlite3({ url: `file:${target.file}` })
      : new PrismaPg(
          {
            connectionString: target.url,
            max: poolSize,
            options: `-c search_path=${target.schema}`,
          },
          { schema: target.schema },
        );
  const prisma = new PrismaClient({ adapter });
  if (target.db === 'sqlite') {
    // The adapter opens the file itself: WAL and fsync at every commit, as the other apps.
    await prisma.$queryRawUnsafe('PRAGMA journal_mode = WAL');
    await prisma.$executeRawUnsafe('PRAGMA synchronous = FULL');
  }
  return {
    executor: prismaExecutor(prisma, { dialect: target.db }) as SqlExecutor<unknown>,
    insert: async (order) => void (await prisma.order.create({ data: order })),
    insertIn: async (tx, order) => void (await (tx as BenchPrisma).order.create({ data: order })),
    close: () => prisma.$disconnect(),
  };
}
