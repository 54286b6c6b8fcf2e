/**
 * The processes the endpoint benchmarks run: a receiver that notes every arrival (time, key,
 * answer) and worker processes on one journal, SQLite or PostgreSQL. Each is this module's file
 * run with `--role receiver` or `--role worker`; the benchmark's main spawns them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import { writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { createNodeHttpFetch, createOutboxWorker, type JournalStore } from 'oncely';
import { createPostgresJournalStore, openPostgresPool } from 'oncely/stores/postgres';
import { createSqliteJournalStore, openSqliteDatabase } from 'oncely/stores/sqlite';

const HERE = fileURLToPath(import.meta.url);

/** Where the journal lives: a SQLite file, or a PostgreSQL URL and schema. */
export type Place =
  | { kind: 'sqlite'; file: string }
  | { kind: 'postgres'; url: string; schema: string };

export function openStore(place: Place): JournalStore<unknown> {
  return (
    place.kind === 'sqlite'
      ? createSqliteJournalStore({ database: () => openSqliteDatabase(place.file) })
      : createPostgresJournalStore({
          pool: () => openPostgresPool(place.url),
          schema: place.schema,
        })
  ) as JournalStore<unknown>;
}

export interface Arrival {
  readonly at: number;
  readonly key: string;
  readonly status: number;
}

/** A child process started with a role; resolves its first stdout line (the receiver's URL). */
function start(args: string[]): { child: ChildProcess; firstLine: Promise<string> } {
  const child = spawn(process.execPath, [HERE, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const firstLine = new Promise<string>((resolve) => lines.once('line', resolve));
  return { child, firstLine };
}

const exited = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) =>
    child.exitCode !== null ? resolve() : child.once('exit', () => resolve()),
  );

/** Starts the receiver: 503 for `outageMs` after its first request (0: never), then 200. */
export async function startReceiver(outageMs: number, logFile: string) {
  const { child, firstLine } = start([
    '--role',
    'receiver',
    '--outage',
    String(outageMs),
    '--log',
    logFile,
  ]);
  const url = await firstLine;
  return {
    url,
    /** Stops it; its arrivals, from the log it writes on SIGTERM. */
    async stop(): Promise<void> {
      child.kill('SIGTERM');
      await exited(child);
    },
  };
}

/** Starts `n` worker processes on the journal. */
export async function startWorkers(n: number, place: Place, sentLog?: string) {
  const children = Array.from({ length: n }, (_, i) =>
    start([
      '--role',
      'worker',
      '--place',
      JSON.stringify(place),
      '--name',
      `w${i}`,
      ...(sentLog === undefined ? [] : ['--log', `${sentLog}.${i}`]),
    ]),
  );
  await Promise.all(children.map((c) => c.firstLine));
  return {
    async stop(): Promise<void> {
      for (const { child } of children) child.kill('SIGTERM');
      await Promise.all(children.map(({ child }) => exited(child)));
    },
  };
}

async function receiver(outageMs: number, logFile: string): Promise<void> {
  const arrivals: Arrival[] = [];
  let firstAt: number | undefined;
  const server = createServer((req, res) => {
    const at = performance.timeOrigin + performance.now();
    firstAt ??= at;
    const status = at - firstAt < outageMs ? 503 : 200;
    arrivals.push({ at, key: String(req.headers['idempotency-key']), status });
    req.resume();
    req.on('end', () => res.writeHead(status).end(status === 200 ? 'ok' : 'down'));
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () =>
    console.log(`http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`),
  );
  process.once('SIGTERM', () => {
    writeFileSync(logFile, JSON.stringify(arrivals));
    process.exit(0);
  });
}

async function worker(place: Place, name: string, sentLog: string | undefined): Promise<void> {
  const store = openStore(place);
  await store.ready();
  const controller = new AbortController();
  process.once('SIGTERM', () => controller.abort());
  console.log('ready');
  // Each send's instant, as the worker calls fetch: set beside the receiver's arrivals.
  const sent: number[] = [];
  const inner = createNodeHttpFetch();
  const fetch = ((input: Parameters<typeof inner>[0], init?: Parameters<typeof inner>[1]) => {
    sent.push(performance.timeOrigin + performance.now());
    return inner(input, init);
  }) as typeof globalThis.fetch;
  await createOutboxWorker({ store, owner: name, batchSize: 16, pollMs: 50, fetch }).run(
    controller.signal,
  );
  await store.close();
  if (sentLog !== undefined) writeFileSync(sentLog, JSON.stringify(sent));
}

if (process.argv[1] === HERE) {
  const { values } = parseArgs({
    options: {
      role: { type: 'string' },
      outage: { type: 'string' },
      log: { type: 'string' },
      place: { type: 'string' },
      name: { type: 'string' },
    },
  });
  if (values.role === 'receiver') await receiver(Number(values.outage), values.log!);
  else if (values.role === 'worker')
    await worker(JSON.parse(values.place!) as Place, values.name!, values.log);
}
