import { join } from 'node:path';
import type { Knex } from 'knex';
import type { Transaction } from 'kysely';
import type { SqlExecutor } from '#oncely/stores/orm/index.js';
import type { EntityManager, EntitySchema } from 'typeorm';
import { after, describe } from 'node:test';
import {
  openDrizzle,
  openKnex,
  openKysely,
  openPrisma,
  openTypeorm,
  ORMS,
  type OpenOptions,
  type Orm,
  type OrmTarget,
  type PrismaClientLike,
} from '../../bench/orm-clients.js';
import { prismaClientModule } from './prisma-client.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../stores/postgres-env.js';

export { ORMS, type Orm, type OrmTarget };

// As in bench/orm-clients.ts, each ORM is imported by its opener only: a crash child loads one.

/**
 * One ORM on one database, as an app sets it up (bench/orm-clients.ts): the ORM's own client
 * (the only pool), an executor over it, and the effect written through the ORM's own transaction
 * object, by the ORM's own query builder, into a table `effects` (id, n).
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
  const backend = await OPENERS[orm](target, { poolSize });
  await backend.executor.query(EFFECTS_DDL[target.db], []);
  return backend;
}

const count = (rows: Array<Record<string, unknown>>): number => Number(rows[0]?.['n'] ?? 0);

const OPENERS: Record<Orm, (t: OrmTarget, options: OpenOptions) => Promise<OrmBackend>> = {
  async kysely(target, options) {
    const opened = await openKysely<EffectsDb>(target, options);
    const db = opened.client;
    return {
      ...opened,
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
    };
  },

  async knex(target, options) {
    const opened = await openKnex(target, options);
    const knex = opened.client;
    return {
      ...opened,
      writeEffect: async (tx, id) =>
        void (await (tx as Knex.Transaction)('effects').insert({ id, n: 1 })),
      countEffects: async (id) => count(await knex('effects').where({ id }).count({ n: '*' })),
      effectIds: async () =>
        ((await knex('effects').select('id')) as Array<{ id: string }>).map((r) => r.id),
    };
  },

  async drizzle(target, options) {
    const opened = await openDrizzle(target, options);
    const { sql } = await import('drizzle-orm');
    if (opened.dialect === 'sqlite') {
      const { integer, sqliteTable, text } = await import('drizzle-orm/sqlite-core');
      const effects = sqliteTable('effects', {
        id: text('id').notNull(),
        n: integer('n').notNull(),
      });
      const db = opened.client;
      return {
        ...opened,
        writeEffect: async (tx, id) =>
          void (await (tx as typeof db).insert(effects).values({ id, n: 1 })),
        countEffects: async (id) =>
          count(db.all(sql`SELECT count(*) AS n FROM effects WHERE id = ${id}`)),
        effectIds: async () => (await db.select({ id: effects.id }).from(effects)).map((r) => r.id),
      };
    }
    const { integer, pgTable, text } = await import('drizzle-orm/pg-core');
    const effects = pgTable('effects', { id: text('id').notNull(), n: integer('n').notNull() });
    const db = opened.client;
    type Tx = Parameters<Parameters<typeof db.transaction>[0]>[0];
    return {
      ...opened,
      writeEffect: async (tx, id) => void (await (tx as Tx).insert(effects).values({ id, n: 1 })),
      countEffects: async (id) =>
        count((await db.execute(sql`SELECT count(*) AS n FROM effects WHERE id = ${id}`)).rows),
      effectIds: async () => (await db.select({ id: effects.id }).from(effects)).map((r) => r.id),
    };
  },

  async typeorm(target, options) {
    const TypeormEffect = await typeormEffect();
    const opened = await openTypeorm(target, options, [TypeormEffect]);
    const effects = opened.client.getRepository(TypeormEffect);
    return {
      ...opened,
      writeEffect: async (tx, id) =>
        void (await (tx as EntityManager).insert(TypeormEffect, { id, n: 1 })),
      countEffects: (id) => effects.countBy({ id }),
      effectIds: async () => (await effects.find({ select: { id: true } })).map((r) => r.id),
    };
  },

  async prisma(target, options) {
    const module = await prismaClientModule(target.db === 'sqlite' ? 'sqlite' : 'postgresql');
    const opened = await openPrisma<TestPrisma>(module, target, options);
    const prisma = opened.client;
    return {
      ...opened,
      writeEffect: async (tx, id) =>
        void (await (tx as TestPrisma).effect.create({ data: { id, n: 1 } })),
      countEffects: (id) => prisma.effect.count({ where: { id } }),
      effectIds: async () =>
        (await prisma.effect.findMany({ select: { id: true } })).map((r) => r.id),
    };
  },
};

type TypeormEffectRow = { pk: number; id: string; n: number };
let typeormEffectSchema: EntitySchema<TypeormEffectRow> | undefined;

/** The effects table as TypeORM maps it, without decorators (made once TypeORM is loaded). */
async function typeormEffect(): Promise<EntitySchema<TypeormEffectRow>> {
  const { EntitySchema } = await import('typeorm');
  return (typeormEffectSchema ??= new EntitySchema<TypeormEffectRow>({
    name: 'Effect',
    tableName: 'effects',
    columns: {
      pk: { type: Number, primary: true, generated: true },
      id: { type: String },
      n: { type: Number },
    },
  }));
}

/** The generated client's model API the tests use (the client is generated at run time). */
interface EffectModel {
  create(args: { data: { id: string; n: number } }): Promise<unknown>;
  count(args: { where: { id: string } }): Promise<number>;
  findMany(args: { select: { id: true } }): Promise<Array<{ id: string }>>;
}
type TestPrisma = PrismaClientLike & { effect: EffectModel };

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
