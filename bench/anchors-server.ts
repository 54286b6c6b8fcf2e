/**
 * The server side of bench/anchors, a child process (anchors-child.ts) so autocannon and the
 * server each have a core: one Express app, one route per row (`POST /<table>/<variant id>`),
 * each with the same effect (anchors-effect.ts) at its table's durability behind a different
 * idempotency layer. Its setup comes
 * as JSON in argv[2]; messages over the IPC channel (anchors-protocol.ts).
 */
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import express, { type ErrorRequestHandler } from 'express';
import { mountOncelyPostgres, mountOncelySqlite } from './anchors-oncely.js';
import type { ClientMessage, ServerMessage, ServerSetup } from './anchors-protocol.js';
import {
  mountExpressAlone,
  mountExpressIdempotency,
  mountNodeIdempotency,
  mountNone,
  mountPowertools,
  type Mounted,
} from './anchors-rivals.js';
import { rowKey, type AnchorsRowId } from './anchors-variants.js';

if (!process.send) throw new Error('bench/anchors-server runs as a child process of bench/anchors');
const setup = JSON.parse(process.argv[2] ?? '{}') as ServerSetup;
const send = (message: ServerMessage): void => void process.send!(message);

/** One row's route: its variant, with the effect (and oncely's SQLite store) at the table's durability. */
async function mount({ variant, table }: AnchorsRowId): Promise<Mounted> {
  const file = join(setup.dir, `${table}-${variant}.db`);
  const redis = (): { url: string; prefix: string } => {
    if (!setup.redis) throw new Error('no Redis given');
    return { url: setup.redis.url, prefix: `${setup.redis.prefix}:${table}:${variant}` };
  };
  switch (variant) {
    case 'none':
      return mountNone(file, table);
    case 'bare-express':
      return mountExpressAlone();
    case 'express-idempotency':
      return mountExpressIdempotency(file, table);
    case 'node-idempotency-memory':
      return mountNodeIdempotency(file, table, 'memory', undefined);
    case 'node-idempotency-redis':
      return mountNodeIdempotency(file, table, 'redis', redis());
    case 'powertools-redis':
      return mountPowertools(file, table, redis());
    case 'oncely-sqlite':
      return mountOncelySqlite(file, table);
    case 'oncely-postgres':
      if (!setup.postgres) throw new Error('no PostgreSQL given');
      return mountOncelyPostgres(setup.postgres.url, setup.postgres.schema, 'claimed');
    case 'oncely-postgres-deferred':
      if (!setup.postgres) throw new Error('no PostgreSQL given');
      return mountOncelyPostgres(setup.postgres.url, setup.postgres.schema, 'deferred');
  }
}

const app = express();
/** Requests whose response is not yet finished or abandoned. */
let active = 0;
app.use((_req, res, next) => {
  active++;
  res.once('close', () => active--);
  next();
});
const mounted = new Map<string, Mounted>();
const skipped: Array<{ row: string; reason: string }> = [];
// Each row is a router of its own, found by its path in one lookup: routes mounted one after
// another on the app made a request to the last row match its path against every row before it
// (some 60 µs of CPU per request for the last of fourteen rows), so the order of the rows
// decided part of their cost.
const routers = new Map<string, express.Router>();
for (const row of setup.rows) {
  const key = rowKey(row);
  try {
    const variant = await mount(row);
    mounted.set(key, variant);
    const router = express.Router();
    router.post(`/${key}`, ...variant.handlers);
    routers.set(`/${key}`, router);
  } catch (error) {
    skipped.push({ row: key, reason: error instanceof Error ? error.message : String(error) });
  }
}
app.use((req, res, next) => {
  const router = routers.get(req.path);
  if (router === undefined) return next();
  router(req, res, next);
});
// The app's own error handler (every README puts one last): a JSON answer, no stack on stderr.
const quietErrors: ErrorRequestHandler = (error: unknown, _req, res, _next) => {
  const status = res.statusCode >= 400 ? res.statusCode : 500;
  if (!res.headersSent)
    res.status(status).json({ error: error instanceof Error ? error.message : String(error) });
};
app.use(quietErrors);

const server = app.listen(0, '127.0.0.1', () =>
  send({ type: 'listening', port: (server.address() as AddressInfo).port, skipped }),
);

async function idle(): Promise<void> {
  while (active > 0) await sleep(5);
}

/**
 * The variant's rows once settled: no request in flight, and the count unchanged over a short
 * pause. A request whose client went away (autocannon drops its connections at the end of a run)
 * is no longer in flight, but its route may still write: it lands in this run's count, not the next.
 */
async function settledCount(variant: Mounted): Promise<number> {
  await idle();
  let rows = await variant.count();
  for (;;) {
    await sleep(30);
    await idle();
    const again = await variant.count();
    if (again === rows) return rows;
    rows = again;
  }
}

process.on('message', (message: ClientMessage) => {
  if (message.type === 'count') {
    const variant = mounted.get(message.row);
    void (variant ? settledCount(variant) : Promise.resolve(Number.NaN)).then((rows) => {
      const cpu = process.cpuUsage();
      send({ type: 'count', row: message.row, rows, cpuMicros: cpu.user + cpu.system });
    });
  } else {
    server.closeAllConnections();
    server.close(() => {
      void Promise.allSettled([...mounted.values()].map((m) => m.close())).then(() =>
        send({ type: 'closed' }),
      );
    });
  }
});
// The bench went away (it ended, or was killed): nothing is left to serve.
process.on('disconnect', () => process.exit(0));
