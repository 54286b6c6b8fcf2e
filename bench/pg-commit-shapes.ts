/**
 * What shape of transaction a keyed new request could take on PostgreSQL, measured store-side (no
 * HTTP, no ledger code): the same effect (one INSERT) and the same ledger row, committed durably,
 * from `--connections` concurrent loops. Not oncely's store: a measurement of the designs it could
 * move to (docs/performance.md, bench/pg-commit-shapes).
 *   floor        the effect alone, autocommit: one statement, one round trip, one commit
 *   today        oncely's shape: the claim committed on its own, then BEGIN + the effect, then
 *                the receipt + COMMIT (each pair pipelined): three round trips, two commits
 *   one trip     BEGIN, the complete ledger row, the effect and COMMIT pipelined in one round trip
 *                (a duplicate's row INSERT fails on the key and rolls its effect back); needs
 *                effects whose SQL is known before it runs ("queued" effects)
 *   group        one writer connection: the requests waiting together share one transaction,
 *                each in a SAVEPOINT with its row and its effect, one COMMIT for all, pipelined
 *                (SQLite's group commit, on PostgreSQL)
 * Variants interleave in every round; medians over rounds, spread, and each ÷ the floor.
 *
 *   npm run build && node dist/bench/pg-commit-shapes.js [--pg URL] [--seconds 3] [--rounds 3]
 */
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { exitOnBadArgs, readBenchArgs, wholeArgOrExit } from './bench-args.js';

const SCHEMA = `oncely_shapes_${process.pid}`;
const BODY = Buffer.from('{"recorded":1}');
const EFFECT = {
  name: 'shape_effect',
  text: `INSERT INTO ${SCHEMA}.effects (amount, note) VALUES ($1, $2)`,
  values: [1, 'note'],
};
const row = (key: string) => ({
  name: 'shape_row',
  text: `INSERT INTO ${SCHEMA}.ledger (scope, key, state, status, body) VALUES ('s', $1, 'completed', 201, $2)`,
  values: [key, BODY],
});

type Shape = (key: string) => Promise<void>;

function shapes(pool: pg.Pool): {
  shapes: Record<string, Shape>;
  perBatch: () => number;
  /** Gives the group's writer connection back (pool.end() waits for it). */
  release: () => void;
} {
  let writer: pg.PoolClient | undefined;
  const waiting: Array<{ key: string; done: () => void; failed: (e: unknown) => void }> = [];
  let flushing = false;
  let batches = 0;
  let grouped = 0;
  async function flush(): Promise<void> {
    if (flushing) return;
    flushing = true;
    writer ??= await pool.connect();
    while (waiting.length > 0) {
      const batch = waiting.splice(0);
      const sent: Array<Promise<unknown>> = [writer.query('BEGIN')];
      batch.forEach((request, i) => {
        sent.push(writer!.query(`SAVEPOINT r${i}`));
        sent.push(writer!.query(row(request.key)));
        sent.push(writer!.query(EFFECT));
        sent.push(writer!.query(`RELEASE r${i}`));
      });
      sent.push(writer.query('COMMIT'));
      try {
        await Promise.all(sent);
        batch.forEach((request) => request.done());
      } catch (error) {
        batch.forEach((request) => request.failed(error));
      }
      batches++;
      grouped += batch.length;
    }
    flushing = false;
  }
  const inOneClient = async (fn: (client: pg.PoolClient) => Promise<unknown>) => {
    const client = await pool.connect();
    try {
      await fn(client);
    } finally {
      client.release();
    }
  };
  return {
    perBatch: () => (batches === 0 ? 0 : grouped / batches),
    release: () => writer?.release(),
    shapes: {
      floor: async () => void (await pool.query(EFFECT)),
      today: async (key) => {
        await pool.query({
          name: 'shape_claim',
          text: `INSERT INTO ${SCHEMA}.ledger (scope, key, state) VALUES ('s', $1, 'in_flight') ON CONFLICT DO NOTHING`,
          values: [key],
        });
        await inOneClient(async (client) => {
          await Promise.all([client.query('BEGIN'), client.query(EFFECT)]);
          await Promise.all([
            client.query({
              name: 'shape_receipt',
              text: `UPDATE ${SCHEMA}.ledger SET state = 'completed', status = 201, body = $2 WHERE scope = 's' AND key = $1`,
              values: [key, BODY],
            }),
            client.query('COMMIT'),
          ]);
        });
      },
      'one trip': (key) =>
        inOneClient((client) =>
          Promise.all([
            client.query('BEGIN'),
            client.query(row(key)),
            client.query(EFFECT),
            client.query('COMMIT'),
          ]),
        ),
      group: (key) =>
        new Promise<void>((done, failed) => {
          waiting.push({ key, done, failed });
          void flush();
        }),
    },
  };
}

/** Requests per second of `shape` from `connections` loops for `ms`. */
async function rate(shape: Shape, connections: number, ms: number, keys: () => string) {
  let done = 0;
  const endAt = performance.now() + ms;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < endAt) {
        await shape(keys());
        done++;
      }
    }),
  );
  return (done * 1000) / ms;
}

export async function runCommitShapes(options: {
  url: string;
  seconds: number;
  rounds: number;
  connections: number;
}): Promise<string> {
  const admin = new pg.Client({ connectionString: options.url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${SCHEMA};
    CREATE TABLE ${SCHEMA}.effects (amount integer NOT NULL, note text NOT NULL);
    CREATE TABLE ${SCHEMA}.ledger (scope text, key text, state text NOT NULL, status integer, body bytea, PRIMARY KEY (scope, key))`);
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.connections,
    pipeline: true,
  } as pg.PoolConfig);
  const { shapes: all, perBatch, release } = shapes(pool);
  let n = 0;
  const keys = () => `k-${n++}`;
  const rates = new Map(Object.keys(all).map((name) => [name, [] as number[]]));
  try {
    for (const shape of Object.values(all)) await rate(shape, options.connections, 300, keys);
    for (let round = 0; round < options.rounds; round++) {
      for (const [name, shape] of Object.entries(all))
        rates.get(name)!.push(await rate(shape, options.connections, options.seconds * 1000, keys));
    }
  } finally {
    release();
    await pool.end();
    await admin.query(`DROP SCHEMA ${SCHEMA} CASCADE`);
    await admin.end();
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
  const floor = median(rates.get('floor')!);
  const lines = [
    `bench/pg-commit-shapes: ${options.connections} loops, durable commits, ${options.rounds} interleaved round(s) of ${options.seconds} s`,
    '',
    '| shape | req/s (spread) | ÷ floor |',
    '|---|---|---|',
    ...[...rates].map(
      ([name, values]) =>
        `| ${name} | ${Math.round(median(values)).toLocaleString('en-US')} (${Math.round(Math.min(...values))}–${Math.round(Math.max(...values))}) | ${(median(values) / floor).toFixed(2)} |`,
    ),
    '',
    `group: ${perBatch().toFixed(1)} requests per transaction`,
  ];
  return `${lines.join('\n')}\n`;
}

const USAGE = `usage: node dist/bench/pg-commit-shapes.js [--pg URL] [--seconds N] [--rounds N] [--connections N]
  The shapes a keyed new request's transaction could take on PostgreSQL, store-side, against the
  effect alone: oncely's today, one round trip, and a group commit.
  --pg URL          PostgreSQL (default: $ONCELY_TEST_POSTGRES_URL)
  --seconds N       length of each measured run (default 3)
  --rounds N        rounds, the shapes interleaved in each (default 3)
  --connections N   concurrent loops (default 10)
  --help            this text`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = readBenchArgs('pg-commit-shapes', USAGE, {
    options: {
      pg: { type: 'string' },
      seconds: { type: 'string' },
      rounds: { type: 'string' },
      connections: { type: 'string' },
      help: { type: 'boolean' },
    },
  });

  const url = values.pg ?? process.env['ONCELY_TEST_POSTGRES_URL'];
  if (!url)
    exitOnBadArgs(
      'pg-commit-shapes',
      'no PostgreSQL given (--pg URL or $ONCELY_TEST_POSTGRES_URL)',
    );
  process.stdout.write(
    await runCommitShapes({
      url,
      seconds: wholeArgOrExit('pg-commit-shapes', 'seconds', values.seconds, 3),
      rounds: wholeArgOrExit('pg-commit-shapes', 'rounds', values.rounds, 3),
      connections: wholeArgOrExit('pg-commit-shapes', 'connections', values.connections, 10),
    }),
  );
}
