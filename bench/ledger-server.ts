/**
 * The server side of bench/ledger, run in a worker thread so autocannon (on the main thread) and
 * the server each have a core: one node:http server, one effect (an INSERT into `bench_effects`).
 *   POST /bare            no oncely at all: a plain node handler, the INSERT in autocommit
 *                         (ledger-bare.ts); the floor every ratio is taken against
 *   POST /store           no key, no ledger, but the INSERT in a transaction of oncely's store
 *                         (so it rides SQLite's group commit): an extra row, not the floor
 *   POST /keyed           the same effect through oncely/node (the node:http adapter) and the ledger
 *   ...?durability=process  the same on the 'process' durability (store and bare connection)
 *   ...?slow=50           an awaited 50 ms call before the write
 * Messages: in 'count' | 'close'; out {type:'listening', port} | {type:'count', rows} | {type:'closed'}.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import pg from 'pg';
import { toNodeListener } from 'oncely/http';
import { idempotencyOf, idempotentListener } from 'oncely/node';
import { createLedger, type Ledger, type LedgerStore } from 'oncely';
import {
  postgresServiceDatabase,
  sqliteServiceDatabase,
  type ServiceDatabase,
  type SqlHandle,
} from '#cli/receivers/sql/index.js';
import { createPostgresStore } from 'oncely/stores/postgres';
import { createSqliteStore, openSqliteDatabase } from 'oncely/stores/sqlite';
import { bareHandler, barePostgres, bareSqlite, type BareEffect } from './ledger-bare.js';
import {
  BENCH_TOKEN,
  type BenchDurability,
  type BenchTarget,
  type ClientMessage,
  type ServerMessage,
} from './ledger-protocol.js';

/** What one durability's routes run on: oncely's store, and the bare connection beside it. */
interface Side {
  readonly store: LedgerStore<unknown>;
  /** The same store committing each deferred request alone (PostgreSQL: no group commit). */
  readonly storeAlone: LedgerStore<unknown>;
  readonly db: ServiceDatabase<unknown>;
  readonly bare: BareEffect;
  /** Rows in this side's effects table. */
  count(): Promise<number>;
  close(): Promise<void>;
}

const EFFECTS = 'bench_effects';
const createEffects = `CREATE TABLE IF NOT EXISTS ${EFFECTS} (amount INTEGER NOT NULL, note TEXT NOT NULL)`;

async function sqliteSide(file: string, durability: BenchDurability): Promise<Side> {
  // A real file in WAL mode, as in production: 'durable' commits at synchronous = FULL (an
  // fsync; concurrent requests share one through the group commit), 'process' at NORMAL.
  const store = createSqliteStore({ database: () => openSqliteDatabase(file), durability });
  const db = sqliteServiceDatabase(store) as ServiceDatabase<unknown>;
  await db.transaction((sql) => sql.run(createEffects));
  const count = async (): Promise<number> =>
    Number(
      (await store.read((tx) => tx.get<{ n: number }>(`SELECT count(*) AS n FROM ${EFFECTS}`)))
        ?.n ?? 0,
    );
  const bare = bareSqlite(file, durability, EFFECTS);
  return {
    store: store as LedgerStore<unknown>,
    storeAlone: store as LedgerStore<unknown>,
    db,
    bare,
    count,
    close: async () => {
      await bare.close();
      await store.close();
    },
  };
}

async function postgresSide(
  target: Extract<BenchTarget, { kind: 'postgres' }>,
  durability: BenchDurability,
): Promise<Side> {
  const { url, schema, applicationName } = target;
  // pipeline: BEGIN goes out with the effect's first statement (send-statements.ts).
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    pipeline: true,
    idleTimeoutMillis: 0,
    application_name: applicationName,
  });
  const table = durability === 'durable' ? 'oncely_ledger' : 'oncely_ledger_process';
  const store = createPostgresStore({ pool, schema, table, durability });
  const alone = { maxRequests: 1 };
  const storeAlone = createPostgresStore({
    pool,
    schema,
    table,
    durability,
    deferredGroups: alone,
  });
  await store.sweep(0, 0); // creates the schema and the ledger's table
  const effects = `"${schema}".${EFFECTS}`;
  await pool.query(createEffects.replace(EFFECTS, effects));
  const bare = barePostgres(url, durability, effects, applicationName);
  return {
    store: store as LedgerStore<unknown>,
    storeAlone: storeAlone as LedgerStore<unknown>,
    db: postgresServiceDatabase(store) as ServiceDatabase<unknown>,
    bare,
    // Both sides share the effects table: the durable side counts it, the other adds nothing.
    count: async () =>
      durability === 'durable'
        ? Number(
            ((await pool.query(`SELECT count(*) AS n FROM ${effects}`)).rows[0] as { n: string }).n,
          )
        : 0,
    close: async () => {
      await bare.close();
      await store.close();
      if (durability === 'durable') await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}

const target = workerData as BenchTarget;
const port = parentPort;
if (!port) throw new Error('bench/ledger-server runs as a worker thread of bench/ledger');

const sides: Record<BenchDurability, Side> =
  target.kind === 'sqlite'
    ? {
        durable: await sqliteSide(target.file, 'durable'),
        process: await sqliteSide(target.processFile, 'process'),
      }
    : {
        durable: await postgresSide(target, 'durable'),
        process: await postgresSide(target, 'process'),
      };

/**
 * The one effect the oncely routes share, down to the SQL text (the bare route's is the same
 * INSERT); the answer's body, sent with 201.
 */
async function effect(sql: SqlHandle, body: string, slowMs: number): Promise<string> {
  const { amount, note } = JSON.parse(body) as { amount: number; note: string };
  // The slow variant: an awaited call (an HTTP request, say) before the write.
  if (slowMs > 0) await new Promise((resolve) => setTimeout(resolve, slowMs));
  await sql.run(`INSERT INTO ${EFFECTS_SQL} (amount, note) VALUES ($1, $2)`, [amount, note]);
  return JSON.stringify({ recorded: amount });
}
const created = (body: string): Response =>
  new Response(body, { status: 201, headers: { 'content-type': 'application/json' } });
const decoder = new TextDecoder();
const EFFECTS_SQL = target.kind === 'postgres' ? `"${target.schema}".${EFFECTS}` : EFFECTS;

interface Routes {
  /** oncely/node: the adapter a node:http app installs, around an unchanged listener. */
  readonly keyed: (req: IncomingMessage, res: ServerResponse) => void;
  /** The same with `writes: 'deferred'`: the INSERT left for the commit (sql.defer). */
  readonly deferred: (req: IncomingMessage, res: ServerResponse) => void;
  /** The same, each request's commit alone (no group commit). */
  readonly deferredAlone: (req: IncomingMessage, res: ServerResponse) => void;
  readonly store: (request: Request) => Promise<Response>;
  readonly bare: ReturnType<typeof bareHandler>;
}

function routesOf(side: Side): Routes {
  const ledger = createLedger({ store: side.store });
  const deferredOn = (ledger: Ledger<unknown>) =>
    idempotentListener(
      {
        ledger,
        writes: 'deferred',
        scopeOf: (req) =>
          req.headers.authorization === `Bearer ${BENCH_TOKEN}` ? BENCH_TOKEN : undefined,
        onError: () => {},
      },
      (req, res) => {
        const context = idempotencyOf(req);
        if (context === undefined) return void res.writeHead(404).end('not found');
        const { amount, note } = JSON.parse(decoder.decode(context.body)) as {
          amount: number;
          note: string;
        };
        context.sql.defer(`INSERT INTO ${EFFECTS_SQL} (amount, note) VALUES ($1, $2)`, [
          amount,
          note,
        ]);
        res
          .writeHead(201, { 'content-type': 'application/json' })
          .end(JSON.stringify({ recorded: amount }));
      },
    );
  const deferred = deferredOn(ledger);
  const deferredAlone = deferredOn(createLedger({ store: side.storeAlone }));
  const keyed = idempotentListener(
    {
      ledger,
      scopeOf: (req) =>
        req.headers.authorization === `Bearer ${BENCH_TOKEN}` ? BENCH_TOKEN : undefined,
      // autocannon drops its connections at the end of a run: requests still in flight then fail
      // with "premature close"; they are counted in the effect rows, not logged one by one.
      onError: () => {},
    },
    async (req, res) => {
      const context = idempotencyOf(req);
      if (context === undefined) return void res.writeHead(404).end('not found');
      const body = decoder.decode(context.body);
      const answer = await effect(side.db.within(context.tx), body, slowOf(req.url ?? '/'));
      res.writeHead(201, { 'content-type': 'application/json' }).end(answer);
    },
  );
  return {
    // Counted until the request is done with (its transaction committed or rolled back), not
    // when its response closes: autocannon drops connections with effects still in flight.
    keyed: (req, res) => void counted(() => keyed(req, res)),
    deferred: (req, res) => void counted(() => deferred(req, res)),
    deferredAlone: (req, res) => void counted(() => deferredAlone(req, res)),
    store: async (request) => {
      const body = await request.text();
      return created(await side.db.transaction((sql) => effect(sql, body, slowOf(request.url))));
    },
    bare: bareHandler(side.bare),
  };
}

const routes: Record<BenchDurability, Routes> = {
  durable: routesOf(sides.durable),
  process: routesOf(sides.process),
};
const slowOf = (url: string): number =>
  Number(new URL(url, 'http://x').searchParams.get('slow') ?? 0);
const durabilityOf = (url: string): BenchDurability =>
  url.includes('durability=process') ? 'process' : 'durable';

/**
 * Handlers still running: a count waits for none, so a run's stragglers are neither counted in
 * the next run nor left holding a write lock the next run's bare connection would wait for. A
 * handler ends after its client has gone (autocannon drops connections at the end of a run), so
 * this counts handlers, not connections.
 */
let active = 0;
async function counted<T>(handle: () => Promise<T>): Promise<T> {
  active++;
  try {
    return await handle();
  } finally {
    active--;
  }
}

/** The store route, web-standard, through toNodeListener. */
const web = toNodeListener(
  (request) =>
    counted(async () => {
      const { pathname } = new URL(request.url);
      const on = routes[durabilityOf(request.url)];
      if (request.method === 'POST' && pathname === '/store') return on.store(request);
      return new Response('not found', { status: 404 });
    }),
  // Answers still streaming when autocannon drops its connections fail with "premature close".
  { onError: () => {} },
);

const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  const url = req.url ?? '/';
  if (req.method === 'POST' && url.startsWith('/bare')) {
    const bare = routes[durabilityOf(url)].bare;
    counted(() => bare(req, res, slowOf(url))).catch(() => res.destroy());
    return;
  }
  if (req.method === 'POST' && url.startsWith('/keyed')) {
    routes[durabilityOf(url)].keyed(req, res);
    return;
  }
  if (req.method === 'POST' && url.startsWith('/deferred-alone')) {
    routes[durabilityOf(url)].deferredAlone(req, res);
    return;
  }
  if (req.method === 'POST' && url.startsWith('/deferred')) {
    routes[durabilityOf(url)].deferred(req, res);
    return;
  }
  web(req, res);
});

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
      .then(async () => (await sides.durable.count()) + (await sides.process.count()))
      .then((rows) => port.postMessage({ type: 'count', rows } satisfies ServerMessage));
  } else {
    server.closeAllConnections();
    server.close(
      () =>
        void sides.process
          .close()
          .then(() => sides.durable.close())
          .then(() => {
            port.postMessage({ type: 'closed' } satisfies ServerMessage);
            port.close(); // nothing else keeps the thread alive: it exits
          }),
    );
  }
});
