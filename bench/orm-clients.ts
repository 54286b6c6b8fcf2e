/**
 * Each ORM opened on one database as an app opens it: the ORM's own client (the app's only pool)
 * and oncely's executor over it. bench/orm's apps (bench/orm-apps.ts) and the tests' ORM backends
 * (test/support/orm-backends.ts) open their ORMs here, and each puts its own table on top.
 */
import { pathToFileURL } from 'node:url';
import type Database from 'better-sqlite3';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import type { Knex } from 'knex';
import type { Kysely } from 'kysely';
import type pg from 'pg';
import type { SqlExecutor } from 'oncely/orm';
import type { PrismaLike } from 'oncely/orm/prisma';
import type { DataSource, EntitySchema } from 'typeorm';

// Each ORM (its package, its executor's module) is imported by its opener only: a test's crash
// child opens one ORM, and loading all five cost it about 0.4 CPU-seconds more.

export const ORMS = ['kysely', 'knex', 'drizzle', 'prisma', 'typeorm'] as const;
export type Orm = (typeof ORMS)[number];
export const ORM_DATABASES = ['postgres', 'sqlite'] as const;
export type OrmDatabase = (typeof ORM_DATABASES)[number];

/** Where the tables go: a SQLite file, or a PostgreSQL URL and a schema of its own. */
export type OrmTarget =
  | { readonly db: 'sqlite'; readonly file: string }
  | { readonly db: 'postgres'; readonly url: string; readonly schema: string };

export interface OpenOptions {
  /** The most connections the PostgreSQL pool opens. */
  readonly poolSize: number;
  /**
   * SQLite fsyncs at every commit (synchronous = FULL, on Prisma's own connection too), as
   * bench/orm's apps run; without it, better-sqlite3's WAL default (the tests' pace).
   */
  readonly durable?: boolean;
}

/** An ORM's client, oncely's executor over it, and the way to close both. */
export interface OrmClient<C> {
  readonly client: C;
  readonly executor: SqlExecutor<unknown>;
  close(): Promise<void>;
}

/** The pragmas every SQLite connection here gets, whichever ORM opened it. */
export function prepareSqlite(db: Database.Database, { durable = false } = {}): void {
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  if (durable) db.pragma('synchronous = FULL');
}

export async function openSqlite(
  file: string,
  { durable = false } = {},
): Promise<Database.Database> {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(file);
  prepareSqlite(db, { durable });
  return db;
}

/** A pool whose every connection works in `schema` (which must exist). */
export async function schemaPool(url: string, schema: string, max: number): Promise<pg.Pool> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: url, max, options: `-c search_path=${schema}` });
  // As node-postgres asks of every app (docs/orm.md): a client whose connection ends emits
  // 'error', on the pool while idle and on itself while checked out, and an 'error' nobody hears
  // ends the process. The query in flight still rejects with it.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

export async function openKysely<DB>(
  target: OrmTarget,
  options: OpenOptions,
): Promise<OrmClient<Kysely<DB>>> {
  const { Kysely, PostgresDialect, SqliteDialect } = await import('kysely');
  const { kyselyExecutor } = await import('oncely/orm/kysely');
  const db = new Kysely<DB>({
    dialect:
      target.db === 'sqlite'
        ? new SqliteDialect({ database: await openSqlite(target.file, options) })
        : new PostgresDialect({
            pool: await schemaPool(target.url, target.schema, options.poolSize),
          }),
  });
  return {
    client: db,
    executor: kyselyExecutor(db, { dialect: target.db }) as SqlExecutor<unknown>,
    close: () => db.destroy(),
  };
}

export async function openKnex(target: OrmTarget, options: OpenOptions): Promise<OrmClient<Knex>> {
  const { default: knexFactory } = await import('knex');
  const { knexExecutor } = await import('oncely/orm/knex');
  const knex: Knex =
    target.db === 'sqlite'
      ? knexFactory({
          client: 'better-sqlite3',
          connection: { filename: target.file },
          useNullAsDefault: true,
          pool: {
            afterCreate: (conn: Database.Database, done: (e: unknown, c: unknown) => void) => {
              prepareSqlite(conn, options);
              done(null, conn);
            },
          },
        })
      : knexFactory({
          client: 'pg',
          connection: { connectionString: target.url },
          searchPath: [target.schema],
          pool: { min: 0, max: options.poolSize },
        });
  return {
    client: knex,
    executor: knexExecutor(knex) as SqlExecutor<unknown>,
    close: () => knex.destroy(),
  };
}

/** Drizzle's database differs by dialect, and so do its tables: the caller picks by `dialect`. */
export type DrizzleClient =
  | (OrmClient<BetterSQLite3Database> & { readonly dialect: 'sqlite' })
  | (OrmClient<NodePgDatabase> & { readonly dialect: 'postgres' });

export async function openDrizzle(target: OrmTarget, options: OpenOptions): Promise<DrizzleClient> {
  const { drizzlePgExecutor, drizzleSqliteExecutor } = await import('oncely/orm/drizzle');
  if (target.db === 'sqlite') {
    const { drizzle: drizzleSqlite } = await import('drizzle-orm/better-sqlite3');
    const connection = await openSqlite(target.file, options);
    const db = drizzleSqlite(connection);
    return {
      dialect: 'sqlite',
      client: db,
      executor: drizzleSqliteExecutor(db) as SqlExecutor<unknown>,
      close: async () => void connection.close(),
    };
  }
  const { drizzle: drizzlePg } = await import('drizzle-orm/node-postgres');
  const pool = await schemaPool(target.url, target.schema, options.poolSize);
  const db = drizzlePg(pool);
  return {
    dialect: 'postgres',
    client: db,
    executor: drizzlePgExecutor(db) as SqlExecutor<unknown>,
    close: () => pool.end(),
  };
}

/** A DataSource over `entities`, initialized (TypeORM hears its pool's 'error' itself). */
export async function openTypeorm(
  target: OrmTarget,
  options: OpenOptions,
  entities: readonly EntitySchema[],
): Promise<OrmClient<DataSource>> {
  const { DataSource } = await import('typeorm');
  const { typeormExecutor } = await import('oncely/orm/typeorm');
  const dataSource = new DataSource(
    target.db === 'sqlite'
      ? {
          type: 'better-sqlite3',
          database: target.file,
          entities: [...entities],
          prepareDatabase: (db: Database.Database) => prepareSqlite(db, options),
        }
      : {
          type: 'postgres',
          url: target.url,
          // TypeORM reads the URL's host, user and database only.
          applicationName: new URL(target.url).searchParams.get('application_name') ?? 'typeorm',
          schema: target.schema,
          entities: [...entities],
          extra: { max: options.poolSize, options: `-c search_path=${target.schema}` },
        },
  );
  await dataSource.initialize();
  return {
    client: dataSource,
    executor: typeormExecutor(dataSource) as SqlExecutor<unknown>,
    close: () => dataSource.destroy(),
  };
}

/** What of a generated Prisma client is used here; the caller's type adds its models. */
export type PrismaClientLike = PrismaLike & { $disconnect(): Promise<void> };

/**
 * The PrismaClient of a generated client module (bench/prisma-generate.ts), on the driver
 * adapter of the target's database.
 */
export async function openPrisma<C extends PrismaClientLike>(
  clientModule: string,
  target: OrmTarget,
  options: OpenOptions,
): Promise<OrmClient<C>> {
  const { PrismaClient } = (await import(pathToFileURL(clientModule).href)) as {
    PrismaClient: new (options: { adapter: unknown }) => C;
  };
  const { prismaExecutor } = await import('oncely/orm/prisma');
  const adapter =
    target.db === 'sqlite'
      ? new (await import('@prisma/adapter-better-sqlite3')).PrismaBetterSqlite3({
          url: `file:${target.file}`,
        })
      : new (await import('@prisma/adapter-pg')).PrismaPg(
          {
            connectionString: target.url,
            max: options.poolSize,
            options: `-c search_path=${target.schema}`,
          },
          { schema: target.schema },
        );
  const prisma = new PrismaClient({ adapter });
  if (target.db === 'sqlite' && options.durable === true) {
    // The adapter opens the file itself: WAL and fsync at every commit, as the other apps.
    await prisma.$queryRawUnsafe('PRAGMA journal_mode = WAL');
    await prisma.$executeRawUnsafe('PRAGMA synchronous = FULL');
  }
  return {
    client: prisma,
    executor: prismaExecutor(prisma, { dialect: target.db }) as SqlExecutor<unknown>,
    close: () => prisma.$disconnect(),
  };
}
