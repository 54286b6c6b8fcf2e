/**
 * The effect every guarded route performs: one INSERT of the order into `orders`. For the rows
 * whose middleware keeps its keys elsewhere (memory, Redis), the route writes it the way such an
 * app does: its own better-sqlite3 connection to its own file, WAL, one autocommit INSERT per
 * request. In the durable table synchronous = FULL (one fsync each, during which better-sqlite3
 * holds the event loop: that is the driver, not the middleware); in the process table
 * synchronous = NORMAL (no fsync on commit: a crash of the process loses nothing, a power cut may).
 */
import Database from 'better-sqlite3';
import type { TableDurability } from './anchors-variants.js';

export const ORDERS_TABLE = `CREATE TABLE IF NOT EXISTS orders (
  id INTEGER PRIMARY KEY, amount INTEGER NOT NULL, note TEXT NOT NULL)`;

/** The request body every variant gets: what the effect records. */
export interface Order {
  readonly amount: number;
  readonly note: string;
}

export interface EffectTable {
  insert(order: Order): number;
  count(): number;
  close(): void;
}

export function openEffectTable(file: string, table: TableDurability): EffectTable {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${table === 'durable' ? 'FULL' : 'NORMAL'}`);
  db.exec(ORDERS_TABLE);
  const insert = db.prepare('INSERT INTO orders (amount, note) VALUES (?, ?)');
  const count = db.prepare('SELECT count(*) AS n FROM orders').pluck();
  return {
    insert: (order) => Number(insert.run(order.amount, order.note).lastInsertRowid),
    count: () => Number(count.get()),
    close: () => db.close(),
  };
}

/** The body's order, or undefined when it is not one (the route answers 400). */
export function orderOf(body: unknown): Order | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { amount, note } = body as Record<string, unknown>;
  return typeof amount === 'number' && typeof note === 'string' ? { amount, note } : undefined;
}
