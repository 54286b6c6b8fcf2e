import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { toNodeListener } from '#oncely/http/index.js';
import { createFixtureApp } from '../fixtures/ledger-app.js';
import { openFixtureStore } from '../fixtures/ledger-fixture-store.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../stores/postgres-env.js';

/**
 * The race test: 50 concurrent requests with one key, over real HTTP on loopback, produce
 * exactly one effect. Every other answer is the replayed receipt or a 409; none is a 5xx.
 */
const REQUESTS = 50;
const SERVER = fileURLToPath(new URL('../fixtures/ledger-server.js', import.meta.url));

async function fire(
  bases: readonly string[],
  key: string,
): Promise<Array<{ status: number; replayed: boolean; pid: number | undefined }>> {
  return Promise.all(
    Array.from({ length: REQUESTS }, async (_, i) => {
      const response = await fetch(`${bases[i % bases.length]}/effects`, {
        method: 'POST',
        headers: {
          authorization: 'Bearer racer',
          'idempotency-key': key,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ id: key }),
      });
      const body =
        response.status === 201
          ? ((await response.json()) as { pid: number })
          : (await response.arrayBuffer(), undefined);
      return {
        status: response.status,
        replayed: response.headers.get('idempotent-replayed') === 'true',
        pid: body?.pid,
      };
    }),
  );
}

function assertOneEffect(answers: Awaited<ReturnType<typeof fire>>): void {
  const summary = answers.map((a) => `${a.status}${a.replayed ? 'r' : ''}`).join(' ');
  assert.equal(answers.filter((a) => a.status === 201 && !a.replayed).length, 1, summary);
  assert.ok(
    answers.every(
      (a) =>
        (a.status === 201 && a.replayed) || a.status === 409 || (a.status === 201 && !a.replayed),
    ),
    summary,
  );
  assert.ok(
    answers.every((a) => a.status < 500),
    summary,
  );
  const executedBy = answers.find((a) => a.status === 201 && !a.replayed)!.pid;
  assert.ok(
    answers.filter((a) => a.replayed).every((a) => a.pid === executedBy),
    'replays carry the first receipt',
  );
}

describe('race: 50 concurrent requests, one key', () => {
  it('SQLite, one server: exactly one effect; the rest replay or 409', {
    timeout: 30_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'oncely-race-'));
    const fixture = await openFixtureStore({ kind: 'sqlite', file: join(dir, 'race.db') });
    // The first effect holds its transaction open until all 50 requests have reached the server,
    // so every one of them really is concurrent with it (a barrier, not a sleep). On one SQLite
    // connection the others queue behind that transaction, then find the receipt.
    let arrived = 0;
    let allArrived!: () => void;
    const barrier = new Promise<void>((resolve) => (allArrived = resolve));
    const app = createFixtureApp(fixture, {}, () => barrier);
    const server = createServer(
      toNodeListener((request) => {
        if (++arrived === REQUESTS) allArrived();
        return app(request);
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const answers = await fire(
        [`http://127.0.0.1:${(server.address() as AddressInfo).port}`],
        'race-sqlite',
      );
      assertOneEffect(answers);
      assert.equal(await fixture.countEffects('race-sqlite'), 1);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await fixture.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

await describePostgres('the race test', ({ url, options }) => {
  const schema = uniqueSchemaName('oncely_race');
  if (url) after(() => dropSchema(url, schema));

  describe('race: 50 concurrent requests, one key, PostgreSQL', options, () => {
    it('two server processes sharing the database: exactly one effect; the rest replay or 409', {
      timeout: 30_000,
    }, async () => {
      const target = { kind: 'postgres' as const, url, schema };
      const fixture = await openFixtureStore(target); // creates the tables before the servers race to
      const children: ChildProcess[] = [];
      try {
        const bases = await Promise.all(
          [0, 1].map(async () => {
            const child = spawn(process.execPath, [SERVER, JSON.stringify(target)], {
              stdio: ['ignore', 'pipe', 'inherit'],
            });
            children.push(child);
            for await (const line of createInterface({ input: child.stdout! })) {
              const port = /^listening (\d+)$/.exec(line)?.[1];
              if (port) return `http://127.0.0.1:${port}`;
            }
            throw new Error('a server process exited before listening');
          }),
        );
        const answers = await fire(bases, 'race-pg');
        assertOneEffect(answers);
        assert.equal(await fixture.countEffects('race-pg'), 1);
        const pids = new Set(answers.map((a) => a.pid).filter((p) => p !== undefined));
        assert.equal(pids.size, 1, 'both servers replay the one receipt');
      } finally {
        await Promise.all(
          children.map(
            (child) =>
              new Promise<void>((resolve) => {
                if (child.exitCode !== null) return resolve();
                child.on('exit', () => resolve());
                child.kill('SIGTERM');
              }),
          ),
        );
        await fixture.close();
      }
    });
  });
});
