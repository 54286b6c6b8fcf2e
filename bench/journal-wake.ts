/**
 * A SQLite journal at low load: how long from an app's record call until the receiver sees the
 * attempt, one intent at a time, each after a random pause (0 to --gap-ms), for the worker
 *   - in the recorder's process, on the same store ("same process");
 *   - in a process of its own, on its own connection ("other process"),
 * and for each, the worker's commits at `workerDurability` 'process' (no fsync, the default) and
 * 'durable' (every commit fsyncs). The record itself always fsyncs. Variants alternate within
 * each round; p50 / p99 pooled over the rounds, and the ratio of the p50s.
 * Then the CPU of a watching worker that has nothing to do: a process of its own, idle for
 * --idle-seconds, its CPU read from /proc/<pid>/stat.
 * The receiver is a process of its own; times are CLOCK_MONOTONIC, shared by every process.
 *
 *   npm run build && node dist/bench/journal-wake.js [--samples 25] [--rounds 2] [--idle-seconds 30]
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createJournal, createOutboxWorker, type JournalStore } from 'oncely';
import { createSqliteJournalStore, openSqliteDatabase } from 'oncely/stores/sqlite';
import { readBenchArgs, wholeArgOrExit } from './bench-args.js';

const MODES = ['same process', 'other process'] as const;
const DURABILITIES = ['process', 'durable'] as const;
type Durability = (typeof DURABILITIES)[number];

const monotonicMs = (): number => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const SELF = fileURLToPath(import.meta.url);

/** A message from a child: what it is ready for, or a key's arrival at the receiver. */
type ChildMessage = { type: 'ready'; url?: string } | { type: 'arrived'; key: string; at: number };

function child(args: string[]): Promise<{ proc: ChildProcess; url: string | undefined }> {
  const proc = fork(SELF, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    proc.once('message', (m: ChildMessage) =>
      resolve({ proc, url: 'url' in m ? m.url : undefined }),
    );
    proc.once('exit', (code) => reject(new Error(`${args[0]} exited with ${code}`)));
  });
}

/** The receiver: answers 200 at once, tells the harness when a key first arrived. */
function receive(): void {
  const seen = new Set<string>();
  const server = createServer((req, res) => {
    const at = monotonicMs();
    const key = String(req.headers['idempotency-key'] ?? '').replaceAll('"', '');
    req.resume();
    req.on('end', () => {
      if (!seen.has(key)) process.send?.({ type: 'arrived', key, at } satisfies ChildMessage);
      seen.add(key);
      res.writeHead(200, { 'content-length': '2' }).end('ok');
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    process.send?.({ type: 'ready', url: `http://127.0.0.1:${port}/hooks` } satisfies ChildMessage);
  });
  process.on('disconnect', () => process.exit(0));
}

/** A worker on the file, running until the harness goes away. */
async function work(file: string, workerDurability: Durability): Promise<void> {
  const store = createSqliteJournalStore({
    database: () => openSqliteDatabase(file),
    workerDurability,
  }) as JournalStore<unknown>;
  await store.ready();
  void createOutboxWorker({ store }).run(new AbortController().signal);
  process.send?.({ type: 'ready' } satisfies ChildMessage);
  process.on('disconnect', () => process.exit(0));
}

/** Low load on one file: record→first arrival (ms) of `samples` intents, one at a time. */
async function lowLoad(
  mode: (typeof MODES)[number],
  durability: Durability,
  ctx: { dir: string; url: string; arrivals: Map<string, (at: number) => void> },
  samples: number,
  gapMs: number,
): Promise<{ total: number[]; afterCommit: number[] }> {
  const file = join(ctx.dir, `${mode.replace(' ', '-')}-${durability}-${monotonicMs()}.db`);
  const open = (workerDurability: Durability) =>
    createSqliteJournalStore({ database: () => openSqliteDatabase(file), workerDurability });
  const store = open(durability) as JournalStore<unknown>;
  await store.ready();
  const stop = new AbortController();
  let other: ChildProcess | undefined;
  let running: Promise<void> | undefined;
  if (mode === 'same process') running = createOutboxWorker({ store }).run(stop.signal);
  else other = (await child(['worker', file, durability])).proc;
  const journal = createJournal({ store });
  const total: number[] = [];
  const afterCommit: number[] = [];
  for (let i = 0; i < samples; i++) {
    await sleep(Math.random() * gapMs);
    const key = `${durability}-${i}-${monotonicMs()}`;
    const arrived = new Promise<number>((resolve) => ctx.arrivals.set(key, resolve));
    const calledAt = monotonicMs();
    await journal.record({ key, target: ctx.url, body: '{}' });
    const committedAt = monotonicMs();
    const at = await arrived;
    total.push(at - calledAt);
    afterCommit.push(at - committedAt);
  }
  stop.abort();
  await running;
  other?.kill();
  await store.close();
  return { total, afterCommit };
}

/** CPU seconds a watching, idle worker process spends in `seconds` (utime + stime). */
async function idleCpu(dir: string, seconds: number): Promise<number> {
  const file = join(dir, `idle-${monotonicMs()}.db`);
  const { proc } = await child(['worker', file, 'process']);
  await sleep(500); // its start and first pass done
  const cpu = (): number => {
    const fields = readFileSync(`/proc/${proc.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks of 10 ms
  };
  const before = cpu();
  await sleep(seconds * 1000);
  const spent = cpu() - before;
  proc.kill();
  return spent;
}

const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
};

async function main(): Promise<void> {
  const { values } = readBenchArgs(
    'journal-wake',
    `usage: node dist/bench/journal-wake.js [options]
  a SQLite journal at low load: record call → the receiver's first arrival, the worker in the
  recorder's process or its own, its commits with and without fsync; then an idle worker's CPU
  --samples N        intents per variant and round (default 25)
  --rounds N         rounds, variants interleaved (default 2)
  --gap-ms N         the random pause before each intent is up to this (default 200)
  --idle-seconds N   how long the idle worker is watched, 0 for none (default 30)
  --help             this text`,
    {
      options: {
        samples: { type: 'string' },
        rounds: { type: 'string' },
        'gap-ms': { type: 'string' },
        'idle-seconds': { type: 'string' },
        help: { type: 'boolean' },
      },
    },
  );
  const samples = wholeArgOrExit('journal-wake', 'samples', values.samples, 25);
  const rounds = wholeArgOrExit('journal-wake', 'rounds', values.rounds, 2);
  const gapMs = wholeArgOrExit('journal-wake', 'gap-ms', values['gap-ms'], 200);
  const idleSeconds = wholeArgOrExit('journal-wake', 'idle-seconds', values['idle-seconds'], 30, 0);
  const dir = mkdtempSync(join(tmpdir(), 'oncely-journal-wake-'));
  const arrivals = new Map<string, (at: number) => void>();
  const receiver = await child(['receiver']);
  receiver.proc.on('message', (m: ChildMessage) => {
    if (m.type === 'arrived') arrivals.get(m.key)?.(m.at);
  });
  const ctx = { dir, url: receiver.url!, arrivals };
  const times = new Map<string, { total: number[]; afterCommit: number[] }>();
  try {
    for (let round = 0; round < rounds; round++)
      for (const mode of MODES)
        for (const durability of round % 2 === 0 ? DURABILITIES : [...DURABILITIES].reverse()) {
          const name = `${mode}, worker '${durability}'`;
          console.error(`  … round ${round + 1}/${rounds}: ${name}`);
          const run = await lowLoad(mode, durability, ctx, samples, gapMs);
          const soFar = times.get(name) ?? { total: [], afterCommit: [] };
          times.set(name, {
            total: [...soFar.total, ...run.total],
            afterCommit: [...soFar.afterCommit, ...run.afterCommit],
          });
        }
    console.log(
      `bench/journal-wake: ${samples} intents a variant and round, ${rounds} rounds, each after 0–${gapMs} ms; record (FULL) → the receiver's first arrival`,
    );
    console.log(
      '| worker | p50 / p99 ms | p50 ÷ durable | after the record returned: p50 / p99 ms |\n|---|---|---|---|',
    );
    const ms = (values: number[]) =>
      `${quantile(values, 0.5).toFixed(2)} / ${quantile(values, 0.99).toFixed(2)}`;
    for (const mode of MODES) {
      const durable = quantile(times.get(`${mode}, worker 'durable'`)!.total, 0.5);
      for (const durability of DURABILITIES) {
        const name = `${mode}, worker '${durability}'`;
        const { total, afterCommit } = times.get(name)!;
        const ratio = (quantile(total, 0.5) / durable).toFixed(2);
        console.log(`| ${name} | ${ms(total)} | ${ratio} | ${ms(afterCommit)} |`);
      }
    }
    if (idleSeconds > 0) {
      const cpu = await idleCpu(dir, idleSeconds);
      console.log(
        `idle watching worker: ${cpu.toFixed(2)} CPU-s in ${idleSeconds} s (${((100 * cpu) / idleSeconds).toFixed(2)} % of a core)`,
      );
    }
  } finally {
    receiver.proc.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

const [role, ...rest] = process.argv.slice(2);
if (role === 'receiver') receive();
else if (role === 'worker') await work(rest[0]!, rest[1] as Durability);
else await main();
