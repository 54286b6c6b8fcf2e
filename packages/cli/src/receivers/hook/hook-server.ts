import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InvalidOptionError, createLedger, systemClock } from 'oncely';
import { toNodeListener } from 'oncely/http';
import { importOptionalDriver } from '../../shared/optional-driver.js';
import { sqliteServiceDatabase } from '../sql/service-database.js';
import { setUpHookHits } from './hook-hits-table.js';
import { createHookService, type HookService, type HookServiceOptions } from './hook-service.js';
import type { SqliteTx } from 'oncely/stores/sqlite';

export interface HookServerOptions extends Omit<HookServiceOptions<SqliteTx>, 'ledger' | 'db'> {
  /** 0 picks a free port. @default 0 */
  readonly port?: number;
  /** @default '127.0.0.1' */
  readonly host?: string;
  /** The SQLite file of the receiver's ledger and hits. @default ':memory:' (gone when it stops) */
  readonly sqliteFile?: string;
}

export interface HookServer {
  /** `http://host:port`, without a trailing slash. */
  readonly url: string;
  readonly port: number;
  readonly service: HookService;
  readonly server: Server;
  /** Stops listening, closes every open connection (kept-alive ones included) and the database. */
  close(): Promise<void>;
}

/**
 * Runs the hook service on a real socket, for `oncely hook` and for tests that must see real
 * connections (a swallowed ack is a dropped TCP connection, not a status code). It has a ledger
 * of its own, on SQLite: in memory by default, in `sqliteFile` to keep keys and hits.
 */
export async function startHookServer(options: HookServerOptions = {}): Promise<HookServer> {
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new InvalidOptionError('port', port, 'an integer from 0 to 65535');
  const host = options.host ?? '127.0.0.1';
  // The driver is an optional peer, loaded when a receiver starts (not when the CLI loads).
  const { openSqliteDatabase, createSqliteStore } = await importOptionalDriver(
    'better-sqlite3',
    'the hook receiver (SQLite)',
    () => import('oncely/stores/sqlite'),
  );
  const store = createSqliteStore({
    database: () => openSqliteDatabase(options.sqliteFile ?? ':memory:'),
  });
  const db = sqliteServiceDatabase(store);
  let service: HookService;
  try {
    await setUpHookHits(db);
    const ledger = createLedger({ store, clock: options.clock ?? systemClock });
    service = createHookService({ ...options, ledger, db });
  } catch (error) {
    await store.close();
    throw error;
  }
  const server = createServer(nodeListener(service));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch(async (error: unknown) => {
    await store.close();
    throw error;
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}`,
    port: address.port,
    service,
    server,
    close: async () => {
      await new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
      await store.close();
    },
  };
}

/**
 * The node:http listener of a hook service: the shared adapter of src/http, which streams the
 * body into the Request (so the service's maxBodyBytes holds while reading, and a 413 never
 * waits for a huge body to arrive in full) and passes the connection `swallow` drops.
 */
export function nodeListener(
  service: Pick<HookService, 'handle'>,
): (req: IncomingMessage, res: ServerResponse) => void {
  return toNodeListener((request, connection) => service.handle(request, connection));
}
