/**
 * bench/chaos's receiver: a small app on the library's public entry points, as a user would write
 * one. POST /effects (keyed) inserts one row into chaos_effects in the ledger's transaction and
 * answers 201; GET /healthz answers 200, or 503 + Retry-After when the store does not answer.
 * SIGTERM drains: no new connections, answers in flight finish, then the process exits.
 *
 * `effectOutsideTransaction` is the harness's broken mode, for showing that the check fails
 * without the ledger's transaction: the row is written on a connection of its own, committed
 * before the receipt. Nothing in the library has such a mode.
 *
 * Run by the harness: node dist/bench/chaos-receiver.js '<ReceiverConfig as JSON>'
 */
import { createServer } from 'node:http';
import { createLedger } from 'oncely';
import { createIdempotencyMiddleware, toNodeListener, withIdempotency } from 'oncely/http';
import { createPostgresStore, openPostgresPool } from 'oncely/stores/postgres';
import { createSqliteStore, openSqliteDatabase } from 'oncely/stores/sqlite';
import type { ReceiverConfig } from './chaos-config.js';

const INSERT_EFFECT = 'INSERT INTO chaos_effects (scope, key, pid) VALUES ($1, $2, $3)';
const HEALTH_RETRY_AFTER_S = '1';

interface Backend {
  readonly store: Parameters<typeof createLedger>[0]['store'];
  /** Throws when the database does not answer. */
  ping(): Promise<void>;
  /** The broken mode's write, on a connection of its own (autocommit). */
  writeOutside(scope: string, key: string): Promise<void>;
  close(): Promise<void>;
}

function openBackend(config: ReceiverConfig): Backend {
  if (config.store === 'postgres') {
    const pool = openPostgresPool(config.where, {
      max: 8,
      connectTimeoutMs: 2000,
      onError: () => undefined, // an idle connection lost with the server: the pool makes a new one
    });
    return {
      store: createPostgresStore({ pool }),
      ping: async () => void (await pool.query('SELECT 1')),
      writeOutside: async (scope, key) =>
        void (await pool.query(INSERT_EFFECT, [scope, key, process.pid])),
      close: () => pool.end(),
    };
  }
  const database = openSqliteDatabase(config.where);
  const side = openSqliteDatabase(config.where);
  // No busy wait: the store's own connection in this process may hold the write lock, and a
  // synchronous wait would stop the event loop that releases it. Tried again after a yield.
  side.pragma('busy_timeout = 0');
  const insertOutside = side.prepare(INSERT_EFFECT.replace(/\$\d/g, '?'));
  return {
    store: createSqliteStore({ database }),
    ping: async () => void database.prepare('SELECT 1').get(),
    writeOutside: async (scope, key) => {
      for (;;) {
        try {
          insertOutside.run(scope, key, process.pid);
          return;
        } catch (error) {
          if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
          await new Promise((resolve) => setTimeout(resolve, 2));
        }
      }
    },
    close: async () => {
      database.close();
      side.close();
    },
  };
}

async function main(config: ReceiverConfig): Promise<void> {
  const backend = openBackend(config);
  const ledger = createLedger({ store: backend.store });
  await ledger.ready(); // the tables exist before the first request (a failure: the supervisor retries)
  const idempotency = createIdempotencyMiddleware({
    ledger,
    scopeOf: (request) => request.headers.get('x-caller') ?? 'chaos',
    onError: () => undefined, // counted by the harness from the answers, not from logs
  });
  const handler = withIdempotency(idempotency, async (request, context) => {
    const path = new URL(request.url).pathname;
    if (path === '/healthz') {
      try {
        await backend.ping();
        return Response.json({ status: 'ok' });
      } catch {
        return new Response('store unavailable', {
          status: 503,
          headers: { 'retry-after': HEALTH_RETRY_AFTER_S },
        });
      }
    }
    if (!context || path !== '/effects') return new Response('not found', { status: 404 });
    if (config.effectOutsideTransaction) await backend.writeOutside(context.scope, context.key);
    else await context.sql.run(INSERT_EFFECT, [context.scope, context.key, process.pid]);
    return Response.json({ key: context.key, pid: process.pid }, { status: 201 });
  });
  const listener = toNodeListener(handler, { onError: () => undefined });
  let draining = false;
  const server = createServer((req, res) => {
    // Draining: each keep-alive connection closes after its answer, so close() can finish.
    if (draining) res.setHeader('connection', 'close');
    // A receiver must answer 503 + Retry-After to an outage, never 500: each 5xx but 503 is told
    // to the harness on stdout (a worker could not always write it to its journal: the outage
    // may be the journal's too).
    res.on('finish', () => {
      if (res.statusCode >= 500 && res.statusCode !== 503)
        process.stdout.write(`answered ${res.statusCode} to ${req.method} ${req.url}\n`);
    });
    listener(req, res);
  });
  server.keepAliveTimeout = 2000;
  server.listen(config.port, '127.0.0.1', () => process.stdout.write('ready\n'));
  process.on('SIGTERM', () => {
    // Drain: refuse new connections, let answers in flight finish, then close the store.
    draining = true;
    server.close(() => void backend.close().finally(() => process.exit(0)));
    server.closeIdleConnections();
    setTimeout(() => process.exit(0), 5000).unref();
  });
}

await main(JSON.parse(process.argv[2] ?? '{}') as ReceiverConfig);
