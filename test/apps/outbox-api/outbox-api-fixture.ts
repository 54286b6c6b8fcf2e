import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { API_RECEIPTS_TABLE, openApiLedger } from '#cli/outbox-api/outbox-api-ledger.js';
import { startOutboxApi } from '#cli/outbox-api/outbox-api-server.js';
import { createCallers } from '#cli/serve/callers.js';
import { createJournal, createOutboxWorker, type Journal } from '#oncely/journal/index.js';
import { createLedger } from '#oncely/ledger/index.js';
import { createPostgresJournalStore, createPostgresStore } from '#oncely/stores/postgres/index.js';
import { createSqliteJournalStore, openSqliteDatabase } from '#oncely/stores/sqlite/index.js';
import { pg, uniqueSchemaName, dropSchema } from '../../stores/postgres-env.js';

export const ALICE = 'alice-token-0123456789';
export const BOB = 'bob-token-0123456789ab';

/** A receiver on a real port: 200 on any path but /refuse (400); each delivery noted. */
export async function startReceiver() {
  const deliveries: { path: string; id: string | undefined; body: string; signed: boolean }[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      deliveries.push({
        path: req.url ?? '',
        id: req.headers['webhook-id'] as string | undefined,
        body,
        signed: typeof req.headers['webhook-signature'] === 'string',
      });
      res.writeHead(req.url === '/refuse' ? 400 : 200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    deliveries,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export interface ApiFixture {
  readonly journal: Journal<unknown>;
  /** A request to the API over HTTP, as alice unless another token is given. */
  ask(path: string, init?: RequestInit & { token?: string | null }): Promise<Response>;
  /** A write: JSON body, its own Idempotency-Key unless one is given. */
  write(
    method: string,
    path: string,
    body?: unknown,
    key?: string,
    token?: string,
  ): Promise<Response>;
  /** Deletes every receipt of the API's ledger: what a receipt lost after the journal committed leaves. */
  forgetReceipts(): Promise<void>;
  /** Sends everything due, as `oncely outbox run` would. */
  deliver(): Promise<void>;
  close(): Promise<void>;
}

let keys = 0;

/** The API over HTTP on a SQLite file (the ledger opened as `outbox serve` opens it) or PostgreSQL. */
export async function openApi(kind: 'sqlite' | 'postgres', dirOrUrl: string): Promise<ApiFixture> {
  const closers: (() => Promise<void>)[] = [];
  let journal: Journal<unknown>;
  let ledger;
  let forgetReceipts: () => Promise<void>;
  if (kind === 'sqlite') {
    const file = join(dirOrUrl, `journal-${++keys}.db`);
    const store = createSqliteJournalStore({ database: () => openSqliteDatabase(file) });
    journal = createJournal({ store });
    await store.ready();
    const api = await openApiLedger({ journal: file });
    forgetReceipts = async () => {
      const db = openSqliteDatabase(file);
      db.exec(`DELETE FROM ${API_RECEIPTS_TABLE}`);
      db.close();
    };
    ledger = api.ledger;
    closers.push(() => journal.close(), api.close);
  } else {
    const schema = uniqueSchemaName('oncely_outbox_api');
    const pool = new pg.Pool({ connectionString: dirOrUrl, max: 4 });
    const store = createPostgresJournalStore({ pool, schema });
    journal = createJournal({ store });
    await store.ready();
    const receipts = createPostgresStore({ pool, schema, table: API_RECEIPTS_TABLE });
    await receipts.ready();
    // No receipt cache: on PostgreSQL it keeps what it wrote, and forgetReceipts must reach all.
    ledger = createLedger({ store: receipts, receiptCacheBytes: 0 });
    forgetReceipts = async () => {
      await pool.query(`DELETE FROM "${schema}".${API_RECEIPTS_TABLE}`);
    };
    closers.push(
      () => receipts.close(),
      () => journal.close(),
      () => pool.end(),
      () => dropSchema(dirOrUrl, schema),
    );
  }
  const callers = createCallers({ tokensEnv: `alice=${ALICE},bob=${BOB}` });
  const server = await startOutboxApi({ journal, ledger: ledger as never, callers });
  const ask: ApiFixture['ask'] = (path, init = {}) => {
    const { token = ALICE, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (token !== null) headers.set('authorization', `Bearer ${token}`);
    return fetch(`${server.origin}${path}`, { ...rest, headers });
  };
  return {
    journal,
    ask,
    forgetReceipts: () => forgetReceipts(),
    write: (method, path, body, key = `k-${++keys}`, token = ALICE) =>
      ask(path, {
        method,
        token,
        headers: { 'idempotency-key': key, 'content-type': 'application/json' },
        ...(body === undefined
          ? {}
          : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      }),
    deliver: async () => {
      await createOutboxWorker({ store: journal.store }).resume();
    },
    async close() {
      await server.close();
      for (const close of closers) await close();
    },
  };
}

/** A problem+json answer with this status and code. */
/** A test body run against a fresh API from `open`, closed after it whatever happens. */
export function withApiOf(open: () => Promise<ApiFixture>) {
  return (fn: (api: ApiFixture) => Promise<void>) => async () => {
    const api = await open();
    try {
      await fn(api);
    } finally {
      await api.close();
    }
  };
}

export async function assertProblem(response: Response, status: number, code: string) {
  const text = await response.text();
  assert.equal(response.status, status, text);
  assert.equal(response.headers.get('content-type'), 'application/problem+json');
  const problem = JSON.parse(text) as { code: string; detail: string };
  assert.equal(problem.code, code, text);
  return problem;
}
