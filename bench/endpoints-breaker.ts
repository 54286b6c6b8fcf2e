/**
 * bench/endpoints-breaker: a receiver process answering 503 for --outage seconds after its first
 * request, then 200; --intents intents for one endpoint, --workers worker processes (SQLite).
 * Run twice: with the endpoint's breaker, and with a breaker that never opens. Prints the
 * attempts during the outage of each, their ratio, and whether every intent was delivered
 * exactly once (one 200 per key at the receiver).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createJournal } from 'oncely';
import { readBenchArgs, wholeArgOrExit } from './bench-args.js';
import { openStore, startReceiver, startWorkers, type Arrival } from './endpoints-harness.js';
import { waitDelivered } from './endpoints-throttle-wait.js';

const USAGE = `bench/endpoints-breaker: attempts during an outage, with and without the breaker

  --intents <n>   intents for the endpoint (default 200)
  --outage <s>    seconds of 503 (default 30)
  --workers <n>   worker processes (default 2)`;

async function runOne(
  dir: string,
  withBreaker: boolean,
  n: number,
  outageS: number,
  workers: number,
) {
  const name = withBreaker ? 'breaker' : 'no-breaker';
  const place = { kind: 'sqlite', file: join(dir, `${name}.db`) } as const;
  const log = join(dir, `${name}.json`);
  const receiver = await startReceiver(outageS * 1000, log);
  const store = openStore(place);
  const journal = createJournal({ store });
  await journal.endpoints.add({
    id: 'bench',
    url: receiver.url,
    breaker: withBreaker
      ? { failureRatio: 0.5, minRequests: 10, windowMs: 30_000, coolDownMs: 5000 }
      : { minRequests: Number.MAX_SAFE_INTEGER },
  });
  for (let i = 0; i < n; i++)
    await journal.record({
      key: `b-${i}`,
      endpoint: 'bench',
      body: '{}',
      maxAttempts: 1000,
      // Exponential from 100 ms, capped at 5 s, as these figures were measured with: the outbox's
      // default schedule (5 s, 5 min, …) would make the outage a few attempts per intent.
      baseDelayMs: 100,
      maxDelayMs: 5000,
    });
  await store.close();
  const fleet = await startWorkers(workers, place);
  const delivered = await waitDelivered(place, n, outageS * 1000 + 120_000);
  await fleet.stop();
  await receiver.stop();
  const arrivals = JSON.parse(readFileSync(log, 'utf8')) as Arrival[];
  const during = arrivals.filter((a) => a.status === 503).length;
  const oks = new Map<string, number>();
  for (const a of arrivals) if (a.status === 200) oks.set(a.key, (oks.get(a.key) ?? 0) + 1);
  const once = [...oks.values()].every((c) => c === 1) && oks.size === n;
  console.log(
    `${name.padEnd(10)} ${n} intents, ${workers} workers: ${during} attempts during the ${outageS} s outage, ${arrivals.length} in all; ${delivered} delivered; each key answered 200 exactly once: ${once}`,
  );
  return during;
}

const { values } = readBenchArgs('endpoints-breaker', USAGE, {
  options: {
    intents: { type: 'string' },
    outage: { type: 'string' },
    workers: { type: 'string' },
    help: { type: 'boolean' },
  },
});
const n = wholeArgOrExit('endpoints-breaker', 'intents', values.intents, 200);
const outage = wholeArgOrExit('endpoints-breaker', 'outage', values.outage, 30);
const workers = wholeArgOrExit('endpoints-breaker', 'workers', values.workers, 2);
const dir = mkdtempSync(join(tmpdir(), 'oncely-bench-breaker-'));
try {
  const without = await runOne(dir, false, n, outage, workers);
  const withIt = await runOne(dir, true, n, outage, workers);
  console.log(
    `attempts during the outage: ${withIt} with the breaker, ${without} without: ${((1 - withIt / without) * 100).toFixed(1)} % fewer`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
