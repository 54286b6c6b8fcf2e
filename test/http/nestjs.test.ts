// oncely/nestjs beyond the conformance suite (adapter-suite.test.ts runs that on both platforms):
// the route's transaction through @Idempotency('sql'), a throw rolling it back, a duplicate in
// flight, per-route options, @Res() routes, forRootAsync, and what the library loads.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  Body,
  Controller,
  Get,
  Header,
  Module,
  NotFoundException,
  Post,
  Res,
  type DynamicModule,
} from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { InvalidOptionError } from '#oncely/contract/errors.js';
import {
  Idempotency,
  Idempotent,
  OncelyModule,
  type RouteIdempotency,
} from '#oncely/http/nestjs/index.js';
import { createLedger, observeLedger, type LedgerDecision } from '#oncely/ledger/index.js';
import { createSqliteStore, openSqliteDatabase } from '#oncely/stores/sqlite/index.js';
import { decorateClass, decorateMethod } from '../support/nest-decorate.js';
import { LIBRARY_SRC, repoPath } from '../support/repo-path.js';
import { tempDir } from '../support/temp-dir.js';
import { turnsUntil } from '../support/turns-until.js';
import { startNest } from './nest-apps.js';

const dir = tempDir('oncely-nestjs-');

interface Order {
  readonly item: string;
  readonly fail?: 'error' | 'not-found';
}

/** Lets a test hold a route mid-flight: `entered` resolves when it runs, `release()` lets it go on. */
function gate(): { entered: Promise<void>; passed: Promise<void>; enter(): void; release(): void } {
  let enter!: () => void;
  let release!: () => void;
  const entered = new Promise<void>((resolve) => (enter = resolve));
  const passed = new Promise<void>((resolve) => (release = resolve));
  return { entered, passed, enter, release };
}

/** A shop whose routes write orders through the ledger's SQL handle. */
function shopModule(oncely: DynamicModule, held: { gate?: ReturnType<typeof gate> }) {
  class ShopController {
    async create(order: Order, sql: RouteIdempotency['sql']) {
      // Held before it writes: on SQLite the first write takes the one writer until the commit.
      if (held.gate) {
        held.gate.enter();
        await held.gate.passed;
      }
      await sql.run('INSERT INTO orders (item) VALUES ($1)', [order.item]);
      if (order.fail === 'error') throw new Error('card declined after the insert');
      if (order.fail === 'not-found') throw new NotFoundException('no such coupon');
      return { item: order.item };
    }
    /** Answers through the platform's response itself (@Res() without passthrough). */
    own(order: Order, res: { status(code: number): { send(body: unknown): unknown } }) {
      res.status(202).send({ accepted: order.item });
    }
    /** A body no JSON parser takes: Fastify parses text itself; on Express the guard reads it. */
    echo(text: unknown) {
      return { text: Buffer.isBuffer(text) ? text.toString('utf8') : text };
    }
    /** Not marked: oncely leaves it alone. */
    open(order: Order) {
      return { open: order.item };
    }
  }
  decorateClass(ShopController, [Controller()]);
  decorateMethod(
    ShopController,
    'create',
    [Post('orders'), Header('cache-control', 'no-store'), Idempotent()],
    [[Body()], [Idempotency('sql')]],
  );
  decorateMethod(
    ShopController,
    'own',
    [Post('own'), Idempotent({ missingKey: 'pass-through' })],
    [[Body()], [Res()]],
  );
  decorateMethod(ShopController, 'open', [Post('open')], [[Body()]]);
  decorateMethod(ShopController, 'echo', [Post('echo'), Idempotent()], [[Body()]]);
  /** Marked whole: its GET, a method the guard does not take, runs as it is. */
  class CatalogController {
    list() {
      return { items: ['tea'] };
    }
  }
  decorateClass(CatalogController, [Controller('catalog'), Idempotent()]);
  decorateMethod(CatalogController, 'list', [Get()]);
  class ShopModule {}
  decorateClass(ShopModule, [
    Module({ imports: [oncely], controllers: [ShopController, CatalogController] }),
  ]);
  return ShopModule;
}

const post = (url: string, path: string, body: Order, key?: string) =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
    body: JSON.stringify(body),
  });

const platforms = [
  ['Express', () => new ExpressAdapter()],
  ['Fastify', () => new FastifyAdapter()],
] as const;

for (const [platform, adapter] of platforms) {
  describe(`NestJS on ${platform}`, () => {
    const database = openSqliteDatabase(join(dir, `${platform}.db`));
    database.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT NOT NULL)');
    const store = createSqliteStore({ database });
    const decisions: LedgerDecision[] = [];
    const errors: unknown[] = [];
    const ledger = observeLedger(createLedger({ store }), (decision) => decisions.push(decision));
    const held: { gate?: ReturnType<typeof gate> } = {};
    const started = startNest(
      shopModule(OncelyModule.forRoot({ ledger, onError: (error) => errors.push(error) }), held),
      adapter(),
      {
        runs: 0,
        values: [],
        failNext: false,
        keys: [],
      },
    );
    const orders = () =>
      store.read((tx) =>
        tx.all<{ item: string }>('SELECT item FROM orders ORDER BY id').map((r) => r.item),
      );
    after(async () => {
      await (await started).close();
      await store.close();
      database.close();
    });

    it("@Idempotency('sql') writes in the route's transaction: a throw rolls it back, the key is free again", async () => {
      const { url } = await started;
      const failed = await post(url, '/orders', { item: 'tea', fail: 'error' }, 'k-throw');
      assert.equal(failed.status, 500, "Nest's exception filter answers the throw");
      assert.deepEqual(await orders(), [], 'the insert rolled back');
      assert.deepEqual(errors, [], "Nest's filter reports a throw; onError is not told again");
      const first = await post(url, '/orders', { item: 'tea' }, 'k-throw');
      assert.equal(first.status, 201, 'the key was released: the route runs again');
      assert.deepEqual(await first.json(), { item: 'tea' });
      const replay = await post(url, '/orders', { item: 'tea' }, 'k-throw');
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(await replay.json(), { item: 'tea' });
      assert.equal(replay.headers.get('cache-control'), 'no-store', "the route's @Header() too");
      const reused = await post(url, '/orders', { item: 'cake' }, 'k-throw');
      assert.equal(reused.status, 422);
      assert.equal(reused.headers.get('cache-control'), 'no-store', 'and on a refusal');
      assert.deepEqual(await orders(), ['tea'], 'committed once, with its receipt');
    });

    it('a GET on a controller marked whole runs without a key, and the ledger is not asked', async () => {
      const { url } = await started;
      const asked = decisions.length;
      const listed = await fetch(`${url}/catalog`);
      assert.equal(listed.status, 200);
      assert.deepEqual(await listed.json(), { items: ['tea'] });
      assert.equal(listed.headers.get('idempotent-replayed'), null);
      assert.equal(decisions.length, asked);
    });

    it('a thrown HttpException is answered by Nest as it is, and rolled back rather than stored', async () => {
      const { url } = await started;
      const before = await orders();
      const refused = await post(url, '/orders', { item: 'cake', fail: 'not-found' }, 'k-404');
      assert.equal(refused.status, 404);
      assert.equal(((await refused.json()) as { message: string }).message, 'no such coupon');
      assert.deepEqual(await orders(), before, 'the insert before the throw rolled back');
      const again = await post(url, '/orders', { item: 'cake', fail: 'not-found' }, 'k-404');
      assert.equal(
        again.headers.get('idempotent-replayed'),
        null,
        'not stored: the route ran again',
      );
      assert.deepEqual(errors, []);
    });

    it('a duplicate while the first is in flight is 409 with Retry-After; the first still commits', async () => {
      const { url } = await started;
      held.gate = gate();
      const first = post(url, '/orders', { item: 'jam' }, 'k-flight');
      await held.gate.entered;
      const duplicate = await post(url, '/orders', { item: 'jam' }, 'k-flight');
      assert.equal(duplicate.status, 409);
      assert.ok(Number(duplicate.headers.get('retry-after')) >= 1);
      assert.match(duplicate.headers.get('content-type') ?? '', /^application\/problem\+json/);
      held.gate.release();
      delete held.gate;
      assert.equal((await first).status, 201);
      assert.equal((await orders()).filter((item) => item === 'jam').length, 1);
    });

    it('a client gone while the route runs rolls it back: the retry runs it anew', async () => {
      const { url } = await started;
      held.gate = gate();
      const aborter = new AbortController();
      const first = fetch(`${url}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'k-gone' },
        body: JSON.stringify({ item: 'fig' }),
        signal: aborter.signal,
      }).catch((error: unknown) => error);
      await held.gate.entered;
      aborter.abort();
      assert.ok((await first) instanceof Error);
      await turnsUntil(() => decisions.some((d) => d.key === 'k-gone'));
      assert.equal(decisions.find((d) => d.key === 'k-gone')?.kind, 'effect_failed');
      held.gate.release(); // the route goes on, into a transaction that has ended
      delete held.gate;
      const retry = await post(url, '/orders', { item: 'fig' }, 'k-gone');
      assert.equal(retry.status, 201);
      assert.equal(retry.headers.get('idempotent-replayed'), null);
      assert.deepEqual(
        (await orders()).filter((item) => item === 'fig'),
        ['fig'],
        'the write of the retry alone',
      );
    });

    it('a text body is fingerprinted as sent and still reaches @Body()', async () => {
      const { url } = await started;
      const echo = (text: string) =>
        fetch(`${url}/echo`, {
          method: 'POST',
          headers: { 'content-type': 'text/plain', 'idempotency-key': 'k-echo' },
          body: text,
        });
      const first = await echo('hello');
      assert.equal(first.status, 201);
      assert.deepEqual(await first.json(), { text: 'hello' });
      assert.equal((await echo('hello')).headers.get('idempotent-replayed'), 'true');
      assert.equal((await echo('hello!')).status, 422, 'other bytes are another payload');
    });

    it('an unmarked route is untouched; a route with its own options passes keyless requests through', async () => {
      const { url } = await started;
      const open = await post(url, '/open', { item: 'tea' });
      assert.equal(open.status, 201, 'no key needed where @Idempotent() is not');
      assert.deepEqual(await open.json(), { open: 'tea' });
      const keyless = await post(url, '/own', { item: 'tea' });
      assert.equal(keyless.status, 202, "@Idempotent({ missingKey: 'pass-through' })");
      const keylessOrder = await post(url, '/orders', { item: 'tea' });
      assert.equal(keylessOrder.status, 400, "the module's default still refuses elsewhere");
    });

    it('a route that answers through @Res() is captured and replayed, the replay not waiting on Nest', async () => {
      const { url } = await started;
      const first = await post(url, '/own', { item: 'pie' }, 'k-own');
      assert.equal(first.status, 202);
      const replay = await post(url, '/own', { item: 'pie' }, 'k-own');
      assert.equal(replay.status, 202);
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(await replay.json(), { accepted: 'pie' });
      const other = await post(url, '/own', { item: 'cake' }, 'k-own');
      assert.equal(other.status, 422, 'a refusal too is written at once');
    });
  });
}

it('forRootAsync takes the options from a factory; @Idempotent() checks its options where it is written', async () => {
  const database = openSqliteDatabase(join(dir, 'async.db'));
  database.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT NOT NULL)');
  const store = createSqliteStore({ database });
  const oncely = OncelyModule.forRootAsync({
    useFactory: async () => ({ ledger: createLedger({ store }) }),
  });
  const app = await startNest(shopModule(oncely, {}), new ExpressAdapter(), {
    runs: 0,
    values: [],
    failNext: false,
    keys: [],
  });
  try {
    assert.equal((await post(app.url, '/orders', { item: 'tea' }, 'k-1')).status, 201);
    const replay = await post(app.url, '/orders', { item: 'tea' }, 'k-1');
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
  } finally {
    await app.close();
    await store.close();
    database.close();
  }
  assert.throws(
    () => Idempotent({ missingKey: 'allow' as never }),
    (error) => error instanceof InvalidOptionError && /missingKey/.test(error.message),
  );
  assert.throws(() => OncelyModule.forRoot({ ledger: undefined as never }), /ledger/);
});

it('only oncely/nestjs imports @nestjs/*: the other subpaths load without Nest', () => {
  const src = repoPath(LIBRARY_SRC);
  const files = (readdirSync(src, { recursive: true }) as string[]).filter((f) =>
    f.endsWith('.ts'),
  );
  const importing = files.filter((file) =>
    /from '@nestjs\/|from 'rxjs/.test(readFileSync(join(src, file), 'utf8')),
  );
  assert.ok(importing.length > 0);
  assert.deepEqual(
    importing.filter((file) => relative(join('http', 'nestjs'), file).startsWith('..')),
    [],
  );
});
