// How the suite runs each file of examples/: what it needs (a live server, the one `oncely serve`
// runs, here in the test's own process; requests from two callers) and what it must print. The
// docs test runs them from dist/examples; the package test runs the same files inside an app that
// installed the packed tarball.
// A new example file needs an entry here (the docs test fails until it has one).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { startTestServer, TOKENS } from '../apps/serve/server-harness.js';
import { postgresTarget, uniqueSchemaName } from '../stores/postgres-env.js';

export interface NodeRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node script` to its end (killed after 60 s) in `cwd` with extra environment. */
export function runNode(
  script: string,
  cwd: string,
  env: NodeJS.ProcessEnv = {},
): Promise<NodeRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], {
      cwd,
      env: { ...process.env, ...env },
      timeout: 60_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs `node script` until it prints `listening on URL`; resolves with the URL and a stop(). */
async function startListening(
  script: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ url: string; stop: () => Promise<string> }> {
  const child = spawn(process.execPath, [script], { cwd, env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(stdout);
      if (match) resolve(match[1]!);
    });
    child.on('close', (code) =>
      reject(new Error(`${script} exited (${code}) before listening:\n${stdout}${stderr}`)),
    );
  });
  return {
    url,
    async stop() {
      child.kill('SIGTERM');
      await closed;
      return stderr;
    },
  };
}

export type ExampleDriver = (script: string, cwd: string) => Promise<void>;

export const EXAMPLE_DRIVERS: Readonly<Record<string, ExampleDriver>> = {
  /** The README's client: one POST to a live hook receiver, under a key. */
  'examples/client.ts': async (script, cwd) => {
    const serve = await startTestServer();
    try {
      const run = await runNode(script, cwd, { URL: serve.url, TOKEN: TOKENS.dev });
      assert.equal(run.code, 0, run.stdout + run.stderr);
      assert.match(run.stdout, /^200 1 attempt\(s\) ok$/m);
      const hits = (await (
        await fetch(`${serve.url}/hooks/debug/hits`, {
          headers: { authorization: `Bearer ${TOKENS.dev}` },
        })
      ).json()) as { hits: unknown[] };
      assert.equal(hits.hits.length, 1, 'the receiver saw one request');
    } finally {
      await serve.close();
    }
  },

  /** docs/client.md's settling client: a scripted 422 is a value, printed with its problem code. */
  'examples/client-settled.ts': async (script, cwd) => {
    const serve = await startTestServer({ hookScript: '422' });
    try {
      const run = await runNode(script, cwd, { URL: serve.url, TOKEN: TOKENS.dev });
      assert.equal(run.code, 0, run.stdout + run.stderr);
      assert.equal(run.stdout, 'refused 422 scripted_refusal fatal_status\n');
      assert.equal(run.stderr, '');
    } finally {
      await serve.close();
    }
  },

  /** docs/client.md's shared retry budget: two retries against a failing receiver cost 10 tokens. */
  'examples/retry-budget.ts': async (script, cwd) => {
    const serve = await startTestServer({ hookScript: '503' });
    const dir = await mkdtemp(join(tmpdir(), 'oncely-example-'));
    try {
      const env = { URL: serve.url, TOKEN: TOKENS.dev, DB_FILE: join(dir, 'budget.db') };
      const first = await runNode(script, cwd, env);
      assert.equal(first.code, 0, first.stdout + first.stderr);
      assert.equal(first.stdout, 'budget_exhausted 3 490\n');
      const second = await runNode(script, cwd, env);
      assert.equal(
        second.stdout,
        'budget_exhausted 3 480\n',
        'a second process spends the same balance',
      );
    } finally {
      await serve.close();
      await rm(dir, { recursive: true, force: true });
    }
  },

  /** docs/ledger.md's core: two callers may use one key; a retry replays; no caller is a 401. */
  'examples/steps.ts': async (script, cwd) => {
    const dir = await mkdtemp(join(tmpdir(), 'oncely-example-'));
    try {
      const run = await runNode(script, cwd, { DB_FILE: join(dir, 'checkout.db') });
      assert.equal(run.code, 0, run.stdout + run.stderr);
      const lines = run.stdout.trim().split('\n');
      assert.match(lines[0]!, /^payment API: charged 1200 under step_/);
      assert.deepEqual(lines.slice(1), [
        'the attempt failed: the warehouse is unavailable',
        'attempt 1: 500',
        'attempt 2: 201 {"order":"order-7","chargeId":"ch_1"}',
        'attempt 3: 201 (replayed) {"order":"order-7","chargeId":"ch_1"}',
        'payment API calls: 1, charges: 1',
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
  'examples/ledger.ts': async (script, cwd) => {
    const dir = await mkdtemp(join(tmpdir(), 'oncely-example-'));
    const server = await startListening(script, cwd, {
      PORT: '0',
      DB_FILE: join(dir, 'ledger.db'),
    });
    try {
      const post = (token: string | undefined, key: string, body: string): Promise<Response> =>
        fetch(`${server.url}/orders`, {
          method: 'POST',
          body,
          headers: {
            'idempotency-key': key,
            'content-type': 'application/json',
            ...(token ? { authorization: `Bearer ${token}` } : {}),
          },
        });
      const alice = await post('alice-secret', 'order-1', '{"item":"tea"}');
      assert.equal(alice.status, 201, await alice.clone().text());
      assert.deepEqual(await alice.json(), { caller: 'alice', key: 'order-1' });
      const bob = await post('bob-secret', 'order-1', '{"item":"cake"}');
      assert.equal(bob.status, 201, 'the same key from another caller is another order');
      const again = await post('alice-secret', 'order-1', '{"item":"tea"}');
      assert.equal(again.status, 201);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      const reused = await post('alice-secret', 'order-1', '{"item":"coffee"}');
      assert.equal(reused.status, 422);
      assert.equal((await post(undefined, 'order-2', '{}')).status, 401);
    } finally {
      const stderr = await server.stop();
      assert.equal(stderr, '', 'nothing failed');
      await rm(dir, { recursive: true, force: true });
    }
  },

  /** docs/outbox.md: an intent delivered through the worker's `deliver` hook, no HTTP. */
  'examples/outbox-deliver.ts': async (script, cwd) => {
    const dir = await mkdtemp(join(tmpdir(), 'oncely-example-'));
    try {
      const run = await runNode(script, cwd, { DB_FILE: join(dir, 'bus.db') });
      assert.equal(run.code, 0, run.stdout + run.stderr);
      assert.deepEqual(run.stdout.trim().split('\n'), [
        'delivered 202 delivered 1',
        'bus: order-7 {"orderId":"order-7","item":"tea"}',
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },

  /** docs/outbox.md: an order and its intent in one transaction, then delivered under its key. */
  'examples/outbox.ts': async (script, cwd) => {
    const serve = await startTestServer();
    const dir = await mkdtemp(join(tmpdir(), 'oncely-example-'));
    try {
      const run = await runNode(script, cwd, {
        URL: serve.url,
        TOKEN: TOKENS.dev,
        DB_FILE: join(dir, 'shop.db'),
      });
      assert.equal(run.code, 0, run.stdout + run.stderr);
      assert.match(run.stdout, /^delivered 200 1 attempt\(s\) delivered 1$/m);
      const hits = (await (
        await fetch(`${serve.url}/hooks/debug/hits`, {
          headers: { authorization: `Bearer ${TOKENS.dev}` },
        })
      ).json()) as { hits: Array<{ key: string }> };
      assert.equal(hits.hits.length, 1, 'the receiver saw one request');
      assert.match(hits.hits[0]!.key, /^order-\d+$/, 'under the order id');
    } finally {
      await serve.close();
      await rm(dir, { recursive: true, force: true });
    }
  },

  /** docs/outbox.md's fan-out: one event to the one endpoint subscribed to its type, once. */
  'examples/outbox-publish.ts': async (script, cwd) => {
    const run = await runNode(script, cwd);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /^published evt-o-1 to shop$/m);
    assert.match(run.stdout, /^again: 0 new intent\(s\)$/m);
    assert.deepEqual(
      run.stdout.split('\n').filter((line) => line.startsWith('received')),
      ['received /shop evt-o-1:shop'],
      'acme is not subscribed to untagged messages',
    );
    assert.match(run.stdout, /^delivered 1$/m);
  },

  /** docs/simulator.md: one world, a small batch and the claims, from apps/sim (the simulator is an app, not a package subpath). */
  'examples/sim.ts': async (script, cwd) => {
    const run = await runNode(script, cwd);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /delivered: \d+/);
    assert.match(run.stdout, /^yes /m);
  },

  /** The README's Express wiring: an unchanged route after express.json(), scoped by req.user. */
  'examples/express.ts': async (script, cwd) => {
    await withListeningExample(script, cwd, async (order) => {
      const first = await order({
        key: 'o-1',
        token: 'alice-secret',
        body: '{"item":"tea","qty":2}',
      });
      assert.equal(first.status, 201, await first.clone().text());
      assert.deepEqual(await first.json(), { order: 'o-1', item: 'tea', qty: 2 });
      const again = await order({
        key: 'o-1',
        token: 'alice-secret',
        body: '{"item":"tea","qty":2}',
      });
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal(
        (await order({ key: 'o-1', token: 'alice-secret', body: '{"item":"tea","qty":3}' })).status,
        422,
      );
      assert.equal(
        (await order({ key: 'o-2', body: '{"item":"tea","qty":1}' })).status,
        401,
        'no req.user, no scope',
      );
    });
  },

  /**
   * docs/ledger.md's Next.js route, here as the module it is, called as Next calls it (no Next:
   * test/http/nextjs-route.test.ts builds and serves the app itself).
   */
  'examples/nextjs/app/api/orders/route.ts': async (script) => {
    const { POST } = (await import(pathToFileURL(script).href)) as {
      POST: (request: Request) => Promise<Response>;
    };
    const order = (key: string, body: string): Promise<Response> =>
      POST(
        new Request('http://localhost:3000/api/orders', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': key },
          body,
        }),
      );
    const first = await order('n-1', '{"item":"tea","qty":2}');
    assert.equal(first.status, 201, await first.clone().text());
    assert.deepEqual(await first.json(), { id: 'order-1', item: 'tea', qty: 2 });
    const again = await order('n-1', '{"item":"tea","qty":2}');
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(await again.json(), { id: 'order-1', item: 'tea', qty: 2 });
    assert.equal((await order('n-1', '{"item":"tea","qty":3}')).status, 422);
  },

  /** docs/ledger.md's Fastify wiring: one tenant, keyless requests passed through. */
  'examples/fastify.ts': async (script, cwd) => {
    await withListeningExample(script, cwd, async (order) => {
      const first = await order({ key: 'f-1', body: '{"item":"tea"}' });
      assert.equal(first.status, 201, await first.clone().text());
      assert.deepEqual(await first.json(), { order: 'f-1', item: 'tea' });
      assert.equal(
        (await order({ key: 'f-1', body: '{"item":"tea"}' })).headers.get('idempotent-replayed'),
        'true',
      );
      assert.equal((await order({ key: 'f-1', body: '{"item":"cake"}' })).status, 422);
      assert.deepEqual(await (await order({ body: '{"item":"cake"}' })).json(), {
        order: null,
        item: 'cake',
      });
    });
  },

  /** docs/ledger.md's PostgreSQL wiring, against the test server in a schema of its own. */
  'examples/postgres.ts': (script, cwd) =>
    withPostgresExample(script, cwd, async (order, orders) => {
      const first = await order({ key: 'p-1', body: '{"item":"tea","qty":2}' });
      assert.equal(first.status, 201, await first.clone().text());
      assert.equal(
        (await order({ key: 'p-1', body: '{"item":"tea","qty":2}' })).headers.get(
          'idempotent-replayed',
        ),
        'true',
      );
      assert.equal((await order({ key: 'p-1', body: '{"item":"tea","qty":5}' })).status, 422);
      assert.deepEqual(
        await orders(),
        [{ caller: 'default', key: 'p-1', item: 'tea', qty: 2 }],
        "one order, in the ledger's database",
      );
    }),

  /** The same route with deferred writes: one order per key, a burst of keys at once included. */
  'examples/postgres-deferred.ts': (script, cwd) =>
    withPostgresExample(script, cwd, async (order, orders) => {
      const first = await order({ key: 'd-1', body: '{"item":"tea","qty":2}' });
      assert.equal(first.status, 201, await first.clone().text());
      const again = await order({ key: 'd-1', body: '{"item":"tea","qty":2}' });
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(await again.json(), await first.json());
      assert.equal((await order({ key: 'd-1', body: '{"item":"tea","qty":5}' })).status, 422);
      const burst = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          order({ key: `d-burst-${i}`, body: `{"item":"jam","qty":${i}}` }),
        ),
      );
      assert.deepEqual(
        burst.map((r) => r.status),
        Array(12).fill(201),
      );
      const rows = await orders();
      assert.equal(rows.length, 13, 'one order per key');
      assert.deepEqual(rows[0], { caller: 'default', key: 'd-1', item: 'tea', qty: 2 });
    }),

  /** docs/orm.md: Express + Kysely on PostgreSQL, the order written with the route's Transaction. */
  'examples/orm-kysely.ts': (script, cwd) =>
    withPostgresExample(script, cwd, async (order, orders) => {
      await ormOrders(order);
      assert.deepEqual(await orders(), [{ caller: 'default', key: 'orm-1', item: 'tea', qty: 2 }]);
    }),

  /** docs/orm.md: node:http + Knex on SQLite, the order written with context.tx. */
  'examples/orm-knex.ts': (script, cwd) => withListeningExample(script, cwd, ormOrders),

  /** docs/orm.md: Fastify + TypeORM on SQLite, the order written with the transaction's EntityManager. */
  'examples/orm-typeorm.ts': (script, cwd) => withListeningExample(script, cwd, ormOrders),

  /** docs/orm.md: Express + Drizzle on PostgreSQL, the order and the webhook it owes in one commit. */
  'examples/orm-drizzle.ts': (script, cwd) =>
    withPostgresExample(script, cwd, async (order, orders, query) => {
      await ormOrders(order);
      assert.deepEqual(await orders(), [{ caller: 'default', key: 'orm-1', item: 'tea', qty: 2 }]);
      assert.deepEqual(
        (await query('SELECT key FROM oncely_intents')).map((r) => r['key']),
        ['order-placed-orm-1'],
        'one webhook owed, committed with its order',
      );
    }),
};

/** The ORM examples' common story: an order, its replay, and the same key with another payload. */
async function ormOrders(order: OrderPost): Promise<void> {
  const first = await order({ key: 'orm-1', body: '{"item":"tea","qty":2}' });
  assert.equal(first.status, 201, await first.clone().text());
  assert.deepEqual(await first.json(), { order: 'orm-1', item: 'tea', qty: 2 });
  const again = await order({ key: 'orm-1', body: '{"item":"tea","qty":2}' });
  assert.equal(again.headers.get('idempotent-replayed'), 'true');
  assert.equal((await order({ key: 'orm-1', body: '{"item":"tea","qty":3}' })).status, 422);
}

/**
 * Runs a PostgreSQL example against the test server in a schema of its own (its pool reaches it
 * through libpq's PGOPTIONS, which pg reads too); `orders()` reads the orders it wrote, by key.
 */
async function withPostgresExample(
  script: string,
  cwd: string,
  check: (
    order: OrderPost,
    orders: () => Promise<unknown[]>,
    query: (sql: string) => Promise<Record<string, unknown>[]>,
  ) => Promise<void>,
): Promise<void> {
  const target = await postgresTarget();
  if (target.kind === 'fail') throw new Error(target.reason);
  if (target.kind === 'skip') {
    console.log(`# ${script} not run: ${target.reason}`);
    return;
  }
  const schema = uniqueSchemaName('oncely_example');
  const admin = new pg.Client({ connectionString: target.url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA "${schema}"`);
  const orders = async () =>
    (await admin.query(`SELECT caller, key, item, qty FROM "${schema}".orders ORDER BY key`)).rows;
  const query = async (sql: string) => {
    await admin.query(`SET search_path = "${schema}"`);
    return (await admin.query(sql)).rows as Record<string, unknown>[];
  };
  try {
    await withListeningExample(script, cwd, (order) => check(order, orders, query), {
      DATABASE_URL: target.url,
      PGOPTIONS: `-c search_path=${schema}`,
    });
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
}

type OrderPost = (init: {
  readonly key?: string;
  readonly token?: string;
  readonly body: string;
}) => Promise<Response>;

/** Starts a listening example on a fresh database file, lets `check` post orders, stops it; nothing may reach stderr. */
async function withListeningExample(
  script: string,
  cwd: string,
  check: (order: OrderPost) => Promise<void>,
  env: NodeJS.ProcessEnv = {},
): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'oncely-example-'));
  const server = await startListening(script, cwd, {
    PORT: '0',
    DB_FILE: join(dir, 'shop.db'),
    ...env,
  });
  try {
    await check(({ key, token, body }) =>
      fetch(`${server.url}/orders`, {
        method: 'POST',
        body,
        headers: {
          'content-type': 'application/json',
          ...(key ? { 'idempotency-key': key } : {}),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
      }),
    );
  } finally {
    const stderr = await server.stop();
    assert.equal(stderr, '', 'nothing failed');
    await rm(dir, { recursive: true, force: true });
  }
}
