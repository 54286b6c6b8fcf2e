import { after, test } from 'node:test';
import type pgModule from 'pg';
import type { LedgerStore } from '#oncely/ledger/index.js';
import { createPostgresStore, type PgPool } from '#oncely/stores/postgres/index.js';

/**
 * The node-postgres the PostgreSQL tests build their pools from: ONCELY_TEST_PG_MODULE names
 * the package (default `pg`; `pg-8-11` is pg 8.11, the oldest the store supports, without
 * pipeline mode). `npm run test:pg-8-11` runs the store and ledger files with it.
 */
export const PG_MODULE = process.env['ONCELY_TEST_PG_MODULE'] || 'pg';
export const pg = ((await import(PG_MODULE)) as { default: typeof pgModule }).default;

/**
 * Which PostgreSQL the tests use (docs/design.md, habit 5: an environment variable chooses the backends).
 * - ONCELY_TEST_POSTGRES_URL, or else the local default below: used when it answers;
 * - no server answering: skip, with the reason printed;
 * - ONCELY_REQUIRE_POSTGRES=1 (CI): a missing or unreachable server is a failure, never a skip.
 */
export type PostgresTarget =
  | { readonly kind: 'ready'; readonly url: string }
  | { readonly kind: 'skip'; readonly reason: string }
  | { readonly kind: 'fail'; readonly reason: string };

/** Where a developer's machine usually has a throwaway database (trust auth, database `test`). */
export const DEFAULT_TEST_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';

export async function postgresTarget(): Promise<PostgresTarget> {
  const url = process.env['ONCELY_TEST_POSTGRES_URL'] || DEFAULT_TEST_POSTGRES_URL;
  const required = process.env['ONCELY_REQUIRE_POSTGRES'] === '1';
  const unavailable = (reason: string): PostgresTarget =>
    required
      ? { kind: 'fail', reason: `${reason}, and ONCELY_REQUIRE_POSTGRES=1` }
      : { kind: 'skip', reason };
  let problem: unknown;
  // Up to three tries: a file whose other tests keep the event loop busy (a burst of SQLite
  // work in microtasks) can see the connect timer fire before the handshake's reply is read.
  for (let attempt = 0; attempt < 3; attempt++) {
    problem = await reachable(url);
    if (problem === undefined) return { kind: 'ready', url };
  }
  return unavailable(
    `PostgreSQL at ${url} is unreachable: ${problem instanceof Error ? problem.message : String(problem)}`,
  );
}

/** Undefined when `url` answers a query, else the error. */
async function reachable(url: string): Promise<unknown> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return error;
  } finally {
    await client.end().catch(() => {});
  }
}

/** How a file's PostgreSQL tests run: against `url`, or skipped with the reason in `options`. */
export interface PostgresTests {
  /** The server to test against; '' when the tests are skipped (they never run then). */
  readonly url: string;
  /** The node:test options of each PostgreSQL test or suite: `{ skip: reason }` when no server answers. */
  readonly options: { readonly skip?: string };
}

/**
 * Registers a file's PostgreSQL tests the one way (docs/design.md, habit 5), `what` naming them:
 * - a server answers: `register` runs with its URL;
 * - none answers: `register` runs with `options.skip` (its tests list as skipped) and the reason is printed;
 * - none answers and ONCELY_REQUIRE_POSTGRES=1: one failing test names the reason instead.
 */
export async function describePostgres(
  what: string,
  register: (pg: PostgresTests) => void,
): Promise<void> {
  const target = await postgresTarget();
  if (target.kind === 'fail') {
    test(`PostgreSQL is available for ${what}`, () => {
      throw new Error(target.reason);
    });
    return;
  }
  if (target.kind === 'skip') console.log(`# skipping ${what} on PostgreSQL: ${target.reason}`);
  register(
    target.kind === 'ready'
      ? { url: target.url, options: {} }
      : { url: '', options: { skip: target.reason } },
  );
}

/** A schema of its own per test file (and process), so parallel test files never collide. */
export function uniqueSchemaName(prefix: string): string {
  return `${prefix}_${process.pid}_${Math.floor(Math.random() * 1e9).toString(36)}`;
}

export async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/**
 * A PostgreSQL store in a fresh schema of its own, on a pool whose search path is that schema (so
 * a handler's unqualified tables land there too); `close` ends the pool and drops the schema.
 * `pipeline: false` makes the pool without pg's pipeline mode (each statement after the last one's
 * answer); so does a pg older than 8.17 (ONCELY_TEST_PG_MODULE).
 */
export function storeInFreshSchema(
  url: string,
  prefix: string,
  { pipeline = true }: { pipeline?: boolean } = {},
): { store: LedgerStore<unknown>; close(): Promise<void> } {
  const schema = uniqueSchemaName(prefix);
  // pipeline: true is pg's option from 8.17 on; an older pg ignores it and runs one at a time.
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    options: `-c search_path=${schema}`,
    ...(pipeline ? { pipeline: true } : {}),
  } as pgModule.PoolConfig) as unknown as PgPool & InstanceType<typeof pg.Pool>;
  const store = createPostgresStore({ pool, schema });
  return {
    store: store as LedgerStore<unknown>,
    close: async () => {
      await pool.end();
      await dropSchema(url, schema);
    },
  };
}

/**
 * A pool for a suite's journal tables in a schema of its own (`prefix` and a unique tail): ended,
 * and the schema dropped, after the suite. Undefined when the tests are skipped (no `url`).
 */
export function suitePool(
  url: string,
  prefix: string,
): { pool: InstanceType<typeof pg.Pool> | undefined; schema: string } {
  const schema = uniqueSchemaName(prefix);
  const pool = url ? new pg.Pool({ connectionString: url, max: 3 }) : undefined;
  after(async () => {
    if (!pool) return;
    await pool.end();
    await dropSchema(url, schema);
  });
  return { pool, schema };
}
