/**
 * The server side of bench/ledger, run in a worker thread so autocannon (on the main thread) and
 * the server each have a core: one node:http server, two routes, one effect.
 *   POST /unkeyed   the effect in a transaction of its own: no key, no ledger
 *   POST /keyed     the same effect through the idempotency middleware and the ledger
 * The effect is one INSERT into `bench_effects`. Messages: in 'count' | 'close'; out
 * {type:'listening', port} | {type:'count', rows} | {type:'closed'}.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import pg from 'pg';
import { createIdempotencyMiddleware, toNodeListener, withIdempotency } from '../src/http/index.js';
import { createLedger, type LedgerStore } from '../src/ledger/index.js';
import {
  postgresServiceDatabase,
  sqliteServiceDatabase,
  type ServiceDatabase,
  type SqlHandle,
} from '../src/services/sql/index.js';
import { createPostgresStore } from '../src/stores/postgres/index.js';
import { createSqliteStore, openSqliteDatabase } from '../src/stores/sqlite/index.js';
import {
  BENCH_TOKEN,
  type BenchTarget,
  type ClientMessage,
  type ServerMessage,
} from './ledger-protocol.js';

interface Opened {
  readonly store: LedgerStore<unknown>;
  readonly db: ServiceDatabase<unknown>;
  readonly effects: string;
  close(): Promise<void>;
}

async function open(target: BenchTarget): Promise<Opened> {
  if (target.kind === 'sqlite') {
    // A real file in WAL mode, as in production: every transaction commits at synchronous = FULL (an
    // fsync); the ledger's claims commit at NORMAL and ride on the next FULL commit's fsync.
    const store = createSqliteStore({ database: () => openSqliteDatabase(target.file) });
    return {
      store: store as LedgerStore<unknown>,
      db: sqliteServiceDatabase(store) as ServiceDatabase<unknown>,
      effects: 'bench_effects',
      close: () => store.close(),
    };
  }
  const pool = new pg.Pool({ connectionString: target.url, max: 10 });
  const store = createPostgresStore({ pool, schema: target.schema });
  await store.sweep(0, 0); // creates the schema and the ledger's table
  return {
    store: store as LedgerStore<unknown>,
    db: postgresServiceDatabase(store) as ServiceDatabase<unknown>,
    effects: `"${target.schema}".bench_effects`,
    close: async () => {
      await store.close();
      await pool.query(`DROP SCHEMA IF EXISTS "${target.schema}" CASCADE`);
      await pool.end();
    },
  };
}

const target = workerData as BenchTarget;
const port = parentPort;
if (!port) throw new Error('bench/ledger-server runs as a worker thread of bench/ledger');

const { store, db, effects, close } = await open(target);
await db.transaction((sql) =>
  sql.run(`CREATE TABLE IF NOT EXISTS ${effects} (amount INTEGER NOT NULL, note TEXT NOT NULL)`),
);

/** The one effect both routes share, down to the SQL text. */
async function effect(sql: SqlHandle, body: string, slowMs: number): Promise<Response> {
  const { amount, note } = JSON.parse(body) as { amount: number; note: string };
  // The slow variant: an awaited call (an HTTP request, say) before the write.
  if (slowMs > 0) await new Promise((resolve) => setTimeout(resolve, slowMs));
  await sql.run(`INSERT INTO ${effects} (amount, note) VALUES ($1, $2)`, [amount, note]);
  return Response.json({ recorded: amount }, { status: 201 });
}

const idempotency = createIdempotencyMiddleware({
  ledger: createLedger({ store }),
  scopeOf: (request) =>
    request.headers.get('authorization') === `Bearer ${BENCH_TOKEN}` ? BENCH_TOKEN : undefined,
  // autocannon drops its connections at the end of a run: requests still in flight then fail
  // with "premature close"; they are counted in the effect rows, not logged one by one.
  onError: () => {},
});
const slowOf = (request: Request): number =>
  Number(new URL(request.url).searchParams.get('slow') ?? 0);
const keyed = withIdempotency(idempotency, async (request, context) =>
  context === undefined
    ? new Response('not found', { status: 404 })
    : effect(db.within(context.tx), await request.text(), slowOf(request)),
);
const unkeyed = async (request: Request): Promise<Response> => {
  const body = await request.text();
  return db.transaction((sql) => effect(sql, body, slowOf(request)));
};

/** Requests being handled: a count waits for none, so a run's stragglers are not counted in the next run. */
let active = 0;
const route = async (request: Request): Promise<Response> => {
  const { pathname } = new URL(request.url);
  if (request.method === 'POST' && pathname === '/keyed') return keyed(request);
  if (request.method === 'POST' && pathname === '/unkeyed') return unkeyed(request);
  return new Response('not found', { status: 404 });
};
const server = createServer(
  toNodeListener(async (request) => {
    active++;
    try {
      return await route(request);
    } finally {
      active--;
    }
  }),
);

async function idle(): Promise<void> {
  while (active > 0) await new Promise((resolve) => setTimeout(resolve, 5));
}
server.listen(0, '127.0.0.1', () =>
  port.postMessage({
    type: 'listening',
    port: (server.address() as AddressInfo).port,
  } satisfies ServerMessage),
);

port.on('message', (message: ClientMessage) => {
  if (message.type === 'count') {
    void idle()
      .then(() =>
        db.transaction((sql) =>
          sql.all<{ n: number | string }>(`SELECT count(*) AS n FROM ${effects}`),
        ),
      )
      .then(([row]) =>
        port.postMessage({ type: 'count', rows: Number(row?.n ?? 0) } satisfies ServerMessage),
      );
  } else {
    server.closeAllConnections();
    server.close(
      () => void close().then(() => port.postMessage({ type: 'closed' } satisfies ServerMessage)),
    );
  }
});
