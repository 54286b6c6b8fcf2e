/**
 * bench/endpoints-throttle: one endpoint limited to --rate messages per second, --intents intents
 * for it, --workers worker processes sharing the journal (SQLite, then PostgreSQL) and one
 * receiver process noting each arrival's time. Prints, per journal, the most arrivals in any 1 s
 * sliding window (the limit holds if it is at most rate × 1.05) and the overall rate.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createJournal } from 'oncely';
import { readBenchArgs, wholeArgOrExit } from './bench-args.js';
import { waitDelivered } from './endpoints-throttle-wait.js';
import {
  openStore,
  startReceiver,
  startWorkers,
  type Arrival,
  type Place,
} from './endpoints-harness.js';

const USAGE = `bench/endpoints-throttle: the per-endpoint throttle across worker processes

  --intents <n>   intents for the endpoint (default 2000)
  --rate <n>      its limit, messages per second (default 50)
  --workers <n>   worker processes (default 4)
  --only <kind>   sqlite or postgres (default both)
  --pg <url>      PostgreSQL (default $ONCELY_TEST_POSTGRES_URL)`;

/** The most arrivals in any window [t, t + widthMs). */
export function maxWindow(times: readonly number[], widthMs = 1000): number {
  let best = 0;
  let j = 0;
  for (let i = 0; i < times.length; i++) {
    while (j < times.length && times[j]! < times[i]! + widthMs) j++;
    best = Math.max(best, j - i);
  }
  return best;
}

async function runOne(place: Place, dir: string, n: number, rate: number, workers: number) {
  const log = join(dir, `${place.kind}-arrivals.json`);
  const receiver = await startReceiver(0, log);
  const store = openStore(place);
  const journal = createJournal({ store });
  await journal.endpoints.add({ id: 'bench', url: receiver.url, ratePerSecond: rate });
  for (let i = 0; i < n; i++)
    await journal.record({ key: `t-${i}`, endpoint: 'bench', body: '{}' });
  await store.close();
  const fleet = await startWorkers(workers, place);
  const delivered = await waitDelivered(place, n, (n / rate) * 3000 + 60_000);
  await fleet.stop();
  await receiver.stop();
  const arrivals = JSON.parse(readFileSync(log, 'utf8')) as Arrival[];
  const times = arrivals.map((a) => a.at).sort((a, b) => a - b);
  const seconds = (times.at(-1)! - times[0]!) / 1000;
  const keys = new Set(arrivals.map((a) => a.key));
  console.log(
    `${place.kind.padEnd(8)} ${workers} workers, limit ${rate}/s: ${arrivals.length} arrivals (${keys.size} keys, ${delivered} delivered) in ${seconds.toFixed(1)} s; max in any 1 s window ${maxWindow(times)} (allowed ${(rate * 1.05).toFixed(1)}); overall ${((times.length - 1) / seconds).toFixed(2)}/s`,
  );
}

const { values } = readBenchArgs('endpoints-throttle', USAGE, {
  options: {
    intents: { type: 'string' },
    rate: { type: 'string' },
    workers: { type: 'string' },
    only: { type: 'string' },
    pg: { type: 'string' },
    help: { type: 'boolean' },
  },
});
const n = wholeArgOrExit('endpoints-throttle', 'intents', values.intents, 2000);
const rate = wholeArgOrExit('endpoints-throttle', 'rate', values.rate, 50);
const workers = wholeArgOrExit('endpoints-throttle', 'workers', values.workers, 4);
const url =
  values.pg ?? process.env['ONCELY_TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const dir = mkdtempSync(join(tmpdir(), 'oncely-bench-throttle-'));
const schema = `oncely_bench_throttle_${process.pid}`;
try {
  if (values.only !== 'postgres')
    await runOne({ kind: 'sqlite', file: join(dir, 'journal.db') }, dir, n, rate, workers);
  if (values.only !== 'sqlite')
    await runOne({ kind: 'postgres', url, schema }, dir, n, rate, workers);
} finally {
  rmSync(dir, { recursive: true, force: true });
  if (values.only !== 'sqlite') {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  }
}
