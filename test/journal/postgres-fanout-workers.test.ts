import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { toNodeListener } from '#oncely/http/node-listener.js';
import { createJournal } from '#oncely/journal/index.js';
import { createFlakyReceiver } from '#cli/lab/outbox/flaky-receiver.js';
import { createPostgresJournalStore } from '#oncely/stores/postgres/index.js';
import { seededRandom } from '#oncely/time/index.js';
import { CLI } from '../support/repo-path.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../stores/postgres-env.js';

/**
 * Fan-out under a crash, with real processes: 60 messages published to 5 subscribed endpoints
 * on one PostgreSQL journal, delivered by 4 `oncely outbox run` processes, one SIGKILLed while an
 * attempt is in flight and a fifth started after it. The receiver dedupes by Idempotency-Key
 * (each endpoint's intent key, also its webhook-id) in a ledger: 300 effects, one per message
 * and endpoint, none lost, none doubled. (bench/chaos runs the same kinds of faults at scale.)
 */
const MESSAGES = 60;
const ENDPOINTS = 5;
const WORKERS = 4;

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as { port: number }).port}`),
    ),
  );
}

/** `oncely outbox run` on the journal until nothing is pending; resolves with how it ended. */
function runWorker(db: string, name: string) {
  const child = spawn(
    process.execPath,
    [
      CLI,
      'outbox',
      'run',
      '--db',
      db,
      // Longer than a batch's attempts take on a loaded machine (as the lease must be: no
      // heartbeat renews it), so no live worker loses its claims mid-send; the killed one's come
      // back after it. With 1 s, a run in the suite made up to 700 requests for 300 deliveries.
      '--lease',
      '3s',
      '--batch',
      '8',
      '--poll',
      '20ms',
      '--worker',
      name,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>(
    (resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stderr })),
  );
  return { child, ended };
}

await describePostgres('fan-out to five endpoints, four worker processes', ({ url, options }) => {
  const schema = uniqueSchemaName('oncely_fanout');
  after(async () => {
    if (url) await dropSchema(url, schema);
  });

  it(
    '60 messages × 5 endpoints, a worker SIGKILLed mid-attempt: 300 effects, one per endpoint each',
    options,
    async () => {
      const receiver = createFlakyReceiver({
        failRate: 0,
        swallowRate: 0,
        random: seededRandom(5),
        effectMs: 2,
      });
      let killOnRequest: { at: number; kill: () => void } | undefined;
      let requests = 0;
      const server = createServer(
        toNodeListener(
          (request, connection) => {
            requests += 1;
            if (killOnRequest !== undefined && requests >= killOnRequest.at) {
              killOnRequest.kill();
              killOnRequest = undefined;
            }
            return receiver.handler(request, connection);
          },
          { onError: () => undefined },
        ),
      );
      const base = await listen(server);
      const pool = new pg.Pool({ connectionString: url, max: 2 });
      const store = createPostgresJournalStore({ pool, schema });
      try {
        const journal = createJournal({ store });
        for (let e = 0; e < ENDPOINTS; e++)
          await journal.endpoints.add({
            id: `e${e}`,
            url: `${base}/e${e}`,
            eventTypes: ['order.*'],
            // Seconds, not the day-long default: under load a lease can still run out mid-send,
            // and each interruption then costs a wait of the schedule before the next attempt.
            retry: { schedule: [500, 1000], maxAttempts: 20 },
          });
        for (let m = 0; m < MESSAGES; m++)
          await journal.publish({ id: `m${m}`, type: 'order.created', data: { order: m } });
        // The workers' connections find the journal's tables through their search_path.
        const db = `${url}${url!.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
        const workers = Array.from({ length: WORKERS }, (_, i) => runWorker(db, `w${i}`));
        killOnRequest = { at: 80, kill: () => workers[0]!.child.kill('SIGKILL') };
        const ends = await Promise.all(workers.map((w) => w.ended));
        assert.equal(ends[0]!.signal, 'SIGKILL', 'the first worker was killed mid-run');
        // What the killed worker held comes back when its lease runs out: one more worker ends it.
        const last = await runWorker(db, 'w-after').ended;
        for (const end of [...ends.slice(1), last])
          assert.equal(end.code, 0, `a worker ended its run cleanly: ${end.stderr}`);

        const counts = await journal.counts();
        assert.equal(counts.delivered, MESSAGES * ENDPOINTS, JSON.stringify(counts));
        const effects = receiver.effects();
        for (let m = 0; m < MESSAGES; m++)
          for (let e = 0; e < ENDPOINTS; e++)
            assert.equal(effects.get(`m${m}:e${e}`), 1, `m${m} reached e${e} once`);
        assert.equal(
          [...effects.values()].reduce((a, b) => a + b, 0),
          MESSAGES * ENDPOINTS,
          'no effect beyond one per message and endpoint',
        );
        console.log(`# ${requests} requests for ${MESSAGES * ENDPOINTS} deliveries`);
      } finally {
        await store.close();
        await pool.end();
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    },
  );
});
