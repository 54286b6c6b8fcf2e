/**
 * The oncely rows of bench/anchors, set up as the README's Express example: `express.json` with
 * `captureRawBody` (the fingerprint comes from the exact bytes), `idempotency({ ledger })` in
 * front of the route, and the route's INSERT through `idempotencyOf(req).sql`, the ledger's own
 * transaction: the order and its receipt commit together.
 *   - SQLite: the orders table lives in the ledger's file (WAL), the store at the table's
 *     durability. 'durable': synchronous = FULL, concurrent requests share one COMMIT (group
 *     commit). 'process': synchronous = NORMAL, as the other rows of the process table.
 *   - PostgreSQL: the orders table lives in the ledger's database, so there the effect is an INSERT
 *     into PostgreSQL in the same transaction as the receipt (not into a SQLite file as in the
 *     other rows). With `writes: 'deferred'` the route defers its INSERT (`sql.defer`) and answers
 *     with the key as the order's number (a deferred write's id is never seen); no claim first, and
 *     the receipt, the INSERT and COMMIT go out in one round trip.
 */
import express, { type RequestHandler } from 'express';
import { captureRawBody, idempotency, idempotencyOf } from 'oncely/express';
import type { WriteMode } from 'oncely/http';
import { createLedger, type LedgerStore } from 'oncely';
import { createPostgresStore, openPostgresPool } from 'oncely/stores/postgres';
import { createSqliteStore, openSqliteDatabase } from 'oncely/stores/sqlite';
import { ORDERS_TABLE, orderOf } from './anchors-effect.js';
import type { Mounted } from './anchors-rivals.js';
import type { TableDurability } from './anchors-variants.js';

const INSERT_ORDER = 'INSERT INTO orders (amount, note) VALUES ($1, $2)';

function oncelyHandlers(
  store: LedgerStore<unknown>,
  writes: WriteMode = 'claimed',
): RequestHandler[] {
  const ledger = createLedger({ store });
  // autocannon drops its connections at the end of a run: requests still in flight then fail
  // with "premature close"; they are not logged one by one.
  const guard = idempotency({ ledger, writes, onError: () => {} });
  const route: RequestHandler = async (req, res, next) => {
    try {
      const order = orderOf(req.body);
      if (!order) {
        res.status(400).json({ error: 'the body must be {"amount": number, "note": string}' });
        return;
      }
      const { sql, key } = idempotencyOf(req)!;
      if (writes === 'deferred') {
        sql.defer(INSERT_ORDER, [order.amount, order.note]);
        res.status(201).json({ order: key, amount: order.amount });
        return;
      }
      const { insertedId } = await sql.run(`${INSERT_ORDER} RETURNING id`, [
        order.amount,
        order.note,
      ]);
      res.status(201).json({ order: Number(insertedId), amount: order.amount });
    } catch (error) {
      next(error); // not stored: the insert rolls back and a retry runs again
    }
  };
  return [express.json({ verify: captureRawBody }), guard as RequestHandler, route];
}

export async function mountOncelySqlite(
  file: string,
  durability: TableDurability,
): Promise<Mounted> {
  const store = createSqliteStore({ database: () => openSqliteDatabase(file), durability });
  await store.write((tx) => tx.exec(ORDERS_TABLE));
  return {
    handlers: oncelyHandlers(store as LedgerStore<unknown>),
    count: () =>
      store.read(
        (tx) => tx.get<{ n: number }>('SELECT count(*) AS n FROM orders')?.n ?? Number.NaN,
      ),
    close: () => store.close(),
  };
}

export async function mountOncelyPostgres(
  url: string,
  schema: string,
  writes: WriteMode,
): Promise<Mounted> {
  // As the README sets it up (pg's pipeline mode, a pool of 10), with a schema of its own, so the
  // ledger and orders tables are this run's; dropped at close.
  const pool = openPostgresPool(url, { searchPath: schema });
  await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await pool.query(
    'CREATE TABLE IF NOT EXISTS orders (id BIGSERIAL PRIMARY KEY, amount INTEGER NOT NULL, note TEXT NOT NULL)',
  );
  const store = createPostgresStore({ pool, schema });
  return {
    handlers: oncelyHandlers(store as LedgerStore<unknown>, writes),
    count: async () =>
      Number(((await pool.query('SELECT count(*) AS n FROM orders')).rows[0] as { n: string }).n),
    close: async () => {
      await store.close();
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}
