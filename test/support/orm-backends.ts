import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, describe } from 'node:test';
import type Database from 'better-sqlite3';
import type { Knex } from 'knex';
import type { Transaction } from 'kysely';
import type pg from 'pg';
import type { EntityManager, EntitySchema } from 'typeorm';
import type { SqlExecutor } from '#oncely/stores/orm/index.js';
import type { PrismaLike } from '#oncely/stores/orm/prisma/index.js';
import { prismaClientModule } from './prisma-client.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../stores/postgres-env.js';

// Each ORM (its package, its executor's module) is imported by its opener only: a crash test's
// child opens one ORM, and loading the five cost it about 0.4 CPU-seconds more, per child.

export const ORMS = ['kysely', 'knex', 'drizzle', 'prisma', 'typeorm'] as const;
export type Orm = (typeof ORMS)[number];
export type Database_ = 'postgres' | 'sqlite';

/** Where one backend's tables go: a SQLite file, or a PostgreSQL URL and a schema of its own. */
export type OrmTarget =
  | { readonly db: 'sqlite'; readonly file: string }
  | { readonly db: 'postgres'; readonly url: string; readonly schema: string };

/**
 * One ORM on one database, as an app sets it up: the ORM's own client (the only pool), an
 * executor over it, and the effect written through the ORM's own transaction object, by the
 * ORM's own query builder, into a table `effects` (id, n).
 */
export interface OrmBackend {
  /** The ORM's own client (Kysely instance, Knex instance, Drizzle database). */
  readonly client: unknown;
  readonly executor: SqlExecutor<unknown>;
  /** Inserts one effect row through the route's transaction handle, with the ORM's builder. */
  writeEffect(tx: unknown, id: string): Promise<void>;
  /** Committed effect rows with this id, read outside any transaction. */
  countEffects(id: string): Promise<number>;
  /** Every committed effect row's id. */
  effectIds(): Promise<string[]>;
  close(): Promise<void>;
}

interface EffectsDb {
  effects: { id: string; n: number };
}

/** The effects table; `pk` is there for Prisma, whose models need an id. */
const EFFECTS_DDL = {
  sqlite:
    'CREATE TABLE IF NOT EXISTS effects (pk INTEGER PRIMARY KEY, id TEXT NOT NULL, n INTEGER NOT NULL)',
  postgres:
    'CREATE TABLE IF NOT EXISTS effects (pk SERIAL PRIMARY KEY, id TEXT NOT NULL, n INTEGER NOT NULL)',
};

async function sqliteFile(file: string): Promise<Database.Database> {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  return db;
}

/** A pool whose every connection works in `schema` (created first by {@link openOrmBackend}). */
async function pgPool(url: string, schema: string, max: number): Promise<pg.Pool> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: url, max, options: `-c search_path=${schema}` });
  // As node-postgres asks of every app (docs/orm.md): a client whose connection ends emits
  // 'error', on the pool while idle and on itself while checked out, and an 'error' nobody hears
  // ends the process. The query in flight still rejects with it.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

export async function openOrmBackend(
  orm: Orm,
  target: OrmTarget,
  { poolSize = 8 } = {},
): Promise<OrmBackend> {
  if (target.db === 'postgres') {
    const { default: pg } = await import('pg');
    const admin = new pg.Client({ connectionString: target.url });
    await admin.connect();
    await admin.query(`CREATE SCHEMA IF NOT EXISTS "${target.schema}"`);
    await admin.end();
  }
  const backend = await OPENERS[orm](target, poolSize);
  await backend.executor.query(EFFECTS_DDL[target.db], []);
  return backend;
}

const count = (rows: Array<Record<string, unknown>>): number => Number(rows[0]?.['n'] ?? 0);

const OPENERS: Record<Orm, (t: OrmTarget, poolSize: number) => Promise<OrmBackend>> = {
  async kysely(target, poolSize) {
    const { Kysely, PostgresDialect, SqliteDialect } = await import('kysely');
    const { kyselyExecutor } = await import('#oncely/stores/orm/kysely/index.js');
    const db = new Kysely<EffectsDb>({
      dialect:
        target.db === 'sqlite'
          ? new SqliteDialect({ database: await sqliteFile(target.file) })
          : new PostgresDialect({ pool: await pgPool(target.url, target.schema, poolSize) }),
    });
    const executor = kyselyExecutor(db, { dialect: target.db });
    return {
      client: db,
      executor: executor as SqlExecutor<unknown>,
      writeEffect: async (tx, id) =>
        void (await (tx as Transaction<EffectsDb>)
          .insertInto('effects')
          .values({ id, n: 1 })
          .execute()),
      countEffects: async (id) =>
        Number(
          (
            await db
              .selectFrom('effects')
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .where('id', '=', id)
              .executeTakeFirstOrThrow()
          ).n,
        ),
      effectIds: async () =>
        (await db.selectFrom('effects').select('id').execute()).map((r) => r.id),
      close: () => db.destroy(),
    };
  },

  async knex(target, poolSize) {
    const { default: knexFactory } = await import('knex');
    const { knexExecutor } = await import('#oncely/stores/orm/knex/index.js');
    const knex: Knex =
      target.db === 'sqlite'
        ? knexFactory({
            client: 'better-sqlite3',
            connection: { filename: target.file },
            useNullAsDefault: true,
            pool: {
              afterCreate: (conn: Database.Database, done: (e: unknown, c: unknown) => void) => {
                conn.pragma('journal_mode = WAL');
                conn.pragma('busy_timeout = 5000');
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
    const executor = knexExecutor(knex);
    return {
      client: knex,
      executor: executor as SqlExecutor<unknown>,
      writeEffect: async (tx, id) =>
        void (await (tx as Knex.Transaction)('effects').insert({ id, n: 1 })),
      countEffects: async (id) => count(await knex('effects').where({ id }).count({ n: '*' })),
      effectIds: async () =>
        ((await knex('effects').select('id')) as Array<{ id: string }>).map((r) => r.id),
      close: () => knex.destroy(),
    };
  },

  async drizzle(target, poolSize) {
    const { sql } = await import('drizzle-orm');
    const { drizzlePgExecutor, drizzleSqliteExecutor } = await import(
      '#oncely/stores/orm/drizzle/index.js'
    );
    if (target.db === 'sqlite') {
      const { drizzle: drizzleSqlite } = await import('drizzle-orm/better-sqlite3');
      const {
        integer: sqliteInteger,
        sqliteTable,
        text: sqliteText,
      } = await import('drizzle-orm/sqlite-core');
      const effects = sqliteTable('effects', {
        id: sqliteText('id').notNull(),
        n: sqliteInteger('n').notNull(),
      });
      const client = await sqliteFile(target.file);
      const db = drizzleSqlite(client);
      const executor = drizzleSqliteExecutor(db);
      return {
        client: db,
        executor: executor as SqlExecutor<unknown>,
        writeEffect: async (tx, id) =>
          void (await (tx as typeof db).insert(effects).values({ id, n: 1 })),
        countEffects: async (id) =>
          count(db.all(sql`SELECT count(*) AS n FROM effects WHERE id = ${id}`)),
        effectIds: async () => (await db.select({ id: effects.id }).from(effects)).map((r) => r.id),
        close: async () => void client.close(),
      };
    }
    const { drizzle: drizzlePg } = await import('drizzle-orm/node-postgres');
    const { integer, pgTable, text: pgText } = await import('drizzle-orm/pg-core');
    const effects = pgTable('effects', { id: pgText('id').notNull(), n: integer('n').notNull() });
    const pool = await pgPool(target.url, target.schema, poolSize);
    const db = drizzlePg(pool);
    const executor = drizzlePgExecutor(db);
    type Tx = Parameters<Parameters<typeof db.transaction>[0]>[0];
    return {
      client: db,
      executor: executor as SqlExecutor<unknown>,
      writeEffect: async (tx, id) => void (await (tx as Tx).insert(effects).values({ id, n: 1 })),
      countEffects: async (id) =>
        count((await db.execute(sql`SELECT count(*) AS n FROM effects WHERE id = ${id}`)).rows),
      effectIds: async () => (await db.select({ id: effects.id }).from(effects)).map((r) => r.id),
      close: () => pool.end(),
    };
  },
  prisma: openPrisma,
  typeorm: openTypeorm,
};

type TypeormEffectRow = { pk: number; id: string; n: number };
/** The effects table as TypeORM maps it, without decorators (made once TypeORM is loaded). */
let typeormEffect: EntitySchema<TypeormEffectRow> | undefined;

async function openTypeorm(target: OrmTarget, poolSize: number): Promise<OrmBackend> {
  const { DataSource, EntitySchema } = await import('typeorm');
  const { typeormExecutor } = await import('#oncely/stores/orm/typeorm/index.js');
  const TypeormEffect = (typeormEffect ??= new EntitySchema<TypeormEffectRow>({
    name: 'Effect',
    tableName: 'effects',
    columns: {
      pk: { type: Number, primary: true, generated: true },
      id: { type: String },
      n: { type: Number },
    },
  }));
  const dataSource = new DataSource(
    target.db === 'sqlite'
      ? {
          type: 'better-sqlite3',
          database: target.file,
          entities: [TypeormEffect],
          prepareDatabase: (db: Database.Database) => {
            db.pragma('journal_mode = WAL');
            db.pragma('busy_timeout = 5000');
          },
        }
      : {
          type: 'postgres',
          url: target.url,
          schema: target.schema,
          entities: [TypeormEffect],
          extra: { max: poolSize, options: `-c search_path=${target.schema}` },
        },
  );
  await dataSource.initialize();
  // TypeORM hears its pool's and its clients' 'error' itself (PostgresDriver, PostgresQueryRunner).
  const effects = dataSource.getRepository(TypeormEffect);
  return {
    client: dataSource,
    executor: typeormExecutor(dataSource) as SqlExecutor<unknown>,
    writeEffect: async (tx, id) =>
      void (await (tx as EntityManager).insert(TypeormEffect, { id, n: 1 })),
    countEffects: (id) => effects.countBy({ id }),
    effectIds: async () => (await effects.find({ select: { id: true } })).map((r) => r.id),
    close: () => dataSource.destroy(),
  };
}

/** The generated client's model API the tests use (the client is generated at run time). */
interface EffectModel {
  create(args: { data: { id: string; n: number } }): Promise<unknown>;
  count(args: { where: { id: string } }): Promise<number>;
  findMany(args: { select: { id: true } }): Promise<Array<{ id: string }>>;
}
type TestPrisma = PrismaLike & { effect: EffectModel; $disconnect(): Promise<void> };

async function openPrisma(target: OrmTarget, poolSize: number): Promise<OrmBackend> {
  const { prismaExecutor } = await import('#oncely/stores/orm/prisma/index.js');
  const file = await prismaClientModule(target.db === 'sqlite' ? 'sqlite' : 'postgresql');
  const { PrismaClient } = (await import(pathToFileURL(file).href)) as {
    PrismaClient: new (options: { adapter: unknown }) => TestPrisma;
  };
  const adapter =
    target.db === 'sqlite'
      ? new (await import('@prisma/adapter-better-sqlite3')).PrismaBetterSqlite3({
          url: `file:${target.file}`,
        })
      : new (await import('@prisma/adapter-pg')).PrismaPg(
          {
            connectionString: target.url,
            max: poolSize,
            options: `-c search_path=${target.schema}`,
          },
          { schema: target.schema },
        );
  const prisma = new PrismaClient({ adapter });
  return {
    client: prisma,
    executor: prismaExecutor(prisma, { dialect: target.db }) as SqlExecutor<unknown>,
    writeEffect: async (tx, id) =>
      void (await (tx as TestPrisma).effect.create({ data: { id, n: 1 } })),
    countEffects: (id) => prisma.effect.count({ where: { id } }),
    effectIds: async () =>
      (await prisma.effect.findMany({ select: { id: true } })).map((r) => r.id),
    close: () => prisma.$disconnect(),
  };
}

/** A SQLite file for one backend, in `dir`. */
export const sqliteTarget = (dir: string, name: string): OrmTarget => ({
  db: 'sqlite',
  file: join(dir, `${name}.db`),
});

/**
 * Where PostgreSQL runs (describePostgres): `register(orm, target, skip)` for each ORM, the
 * target a schema of its own, dropped after the tests. With `sideBySide`, the ORMs' suites run
 * at once: they wait on PostgreSQL far longer than they compute, so their waits overlap. Only for
 * suites on a virtual clock (a real lease can run out under the added load), each keeping its own
 * tests one at a time (`concurrency: false`), or they would run at once too.
 */
export async function forEachPostgresOrm(
  what: string,
  prefix: string,
  register: (orm: Orm, target: () => OrmTarget, skip: string | undefined) => void,
  { sideBySide = false } = {},
): Promise<void> {
  await describePostgres(what, ({ url, options }) => {
    const schemas: string[] = [];
    after(async () => {
      for (const schema of schemas) await dropSchema(url, schema);
    });
    describe(`${what}: each ORM`, { concurrency: sideBySide }, () => {
      for (const orm of ORMS)
        register(
          orm,
          () => {
            const schema = uniqueSchemaName(`${prefix}_${orm}`);
            schemas.push(schema);
            return { db: 'postgres', url, schema };
          },
          options.skip,
        );
    });
  });
}
