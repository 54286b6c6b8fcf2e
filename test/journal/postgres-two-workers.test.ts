import { createServer, type Server } from 'node:http';
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { toNodeListener } from '#oncely/http/node-listener.js';
import { createJournal, createOutboxWorker } from '#oncely/journal/index.js';
import { createFlakyReceiver } from '#cli/lab/outbox/flaky-receiver.js';
import { createPostgresJournalStore } from '#oncely/stores/postgres/index.js';
import { seededRandom } from '#oncely/time/index.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../stores/postgres-env.js';

// Enough for the two workers' claims to collide often (over a thousand, a few dozen intents were
// settled by both over their attempts; half as many gave half as many handoffs): the size is not
// what is tested, the handoffs are.
const INTENTS = 500;

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as { port: number }).port}`),
    ),
  );
}

await describePostgres('two outbox workers on one database', ({ url, options }) => {
  const schema = uniqueSchemaName('oncely_outbox2');
  after(async () => {
    if (url) await dropSchema(url, schema);
  });

  it(
    '500 intents, two workers with pools of their own: each intent delivered once, never sent by both at the same time',
    options,
    async () => {
      const receiver = createFlakyReceiver({
        failRate: 0.1,
        swallowRate: 0.05,
        random: seededRandom(1000),
        effectMs: 2,
      });
      const server = createServer(toNodeListener(receiver.handler, { onError: () => undefined }));
      const target = `${await listen(server)}/orders`;
      const pools = [
        new pg.Pool({ connectionString: url, max: 4 }),
        new pg.Pool({ connectionString: url, max: 4 }),
      ];
      const stores = pools.map((pool) => createPostgresJournalStore({ pool, schema }));
      try {
        const journal = createJournal({ store: stores[0]! });
        await stores[0]!.ready();
        for (let i = 0; i < INTENTS; i += 100) {
          await Promise.all(
            Array.from({ length: 100 }, (_, j) =>
              journal.record({
                key: `o-${i + j}`,
                target,
                body: `{"order":${i + j}}`,
                maxAttempts: 8,
                baseDelayMs: 2,
                maxDelayMs: 20,
                attemptTimeoutMs: 2000,
              }),
            ),
          );
        }
        const sentBy = new Map<string, Set<string>>();
        const workers = stores.map((store, n) =>
          createOutboxWorker({
            store,
            owner: `worker-${n}`,
            batchSize: 16,
            pollMs: 10,
            leaseMs: 10_000,
            onSettled: (event) => {
              if (!event.written) assert.fail(`worker-${n} lost its lease on ${event.key}`);
              const by = sentBy.get(event.key) ?? new Set<string>();
              by.add(`worker-${n}`);
              sentBy.set(event.key, by);
            },
          }),
        );
        const [a, b] = await Promise.all(workers.map((worker) => worker.resume()));
        assert.equal(a!.delivered, INTENTS);
        assert.equal(b!.delivered, INTENTS);
        // One snapshot of the effects: each effects() call copies them all.
        const effects = receiver.effects();
        for (let i = 0; i < INTENTS; i++)
          assert.equal(effects.get(`o-${i}`), 1, `o-${i} has exactly one effect`);
        assert.equal(receiver.overlaps(), 0, 'no key ever had two attempts in flight at once');
        const both = [...sentBy.values()].filter((set) => set.size === 2).length;
        const perWorker = [0, 1].map(
          (n) => [...sentBy.values()].filter((set) => set.has(`worker-${n}`)).length,
        );
        assert.ok(
          perWorker.every((count) => count > 0),
          `both workers took part: ${perWorker.join(' / ')}`,
        );
        const requests = [...receiver.requests.values()].reduce((x, y) => x + y, 0);
        console.log(
          `# worker-0 settled ${perWorker[0]} intents, worker-1 ${perWorker[1]}, ${both} by both over their attempts; ${requests} requests, ${receiver.overlaps()} overlaps`,
        );
      } finally {
        await Promise.all(stores.map((store) => store.close()));
        await Promise.all(pools.map((pool) => pool.end()));
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    },
  );
});
