/**
 * The floor bench/ledger measures oncely against: the same effect with no oncely at all, as an
 * app without an idempotency layer would write it. A plain node:http handler reads the body,
 * parses it, runs the INSERT in autocommit on a connection of its own, and answers 201 JSON.
 * Each statement commits on its own at the given durability:
 *   - SQLite: its own better-sqlite3 connection on the file, WAL, synchronous = FULL (durable: one
 *     fsync per request) or NORMAL (process: none);
 *   - PostgreSQL: a pool of its own, synchronous_commit on (durable) or off (process).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { BenchDurability } from './ledger-protocol.js';

export interface BareEffect {
  /** Runs the INSERT in autocommit; resolves once it is committed at the connection's durability. */
  insert(amount: number, note: string): Promise<void>;
  close(): Promise<void>;
}

export function bareSqlite(file: string, durability: BenchDurability, table: string): BareEffect {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${durability === 'durable' ? 'FULL' : 'NORMAL'}`);
  db.pragma('busy_timeout = 5000');
  const insert = db.prepare(`INSERT INTO ${table} (amount, note) VALUES (?, ?)`);
  return {
    insert: async (amount, note) => void insert.run(amount, note),
    close: async () => void db.close(),
  };
}

export function barePostgres(
  url: string,
  durability: BenchDurability,
  table: string,
  applicationName: string,
): BareEffect {
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    idleTimeoutMillis: 0,
    application_name: applicationName,
    options: `-c synchronous_commit=${durability === 'durable' ? 'on' : 'off'}`,
  });
  const text = `INSERT INTO ${table} (amount, note) VALUES ($1, $2)`;
  return {
    insert: async (amount, note) => void (await pool.query(text, [amount, note])),
    close: () => pool.end(),
  };
}

/** The bare route: body, JSON, the INSERT (after an awaited `slowMs` call when > 0), 201 JSON. */
export function bareHandler(
  effect: BareEffect,
): (req: IncomingMessage, res: ServerResponse, slowMs: number) => Promise<void> {
  return async (req, res, slowMs) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const { amount, note } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      amount: number;
      note: string;
    };
    if (slowMs > 0) await new Promise((resolve) => setTimeout(resolve, slowMs));
    await effect.insert(amount, note);
    const body = JSON.stringify({ recorded: amount });
    res.writeHead(201, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  };
}
