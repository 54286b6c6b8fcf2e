/**
 * Instructions per request of bench/anchors' routes, build against build: each build's anchors
 * server (dist/bench/anchors-server.js of the checkout given) runs under valgrind's callgrind, is
 * warmed up uninstrumented, then serves a fixed number of requests per row and mode while
 * callgrind counts the instructions its process executes. On a shared machine, where req/s and
 * even CPU time move with the other load, an instruction count does not: it is how "no slower
 * than before" is checked (the CPU a syscall spends in the kernel, an fsync, is not counted).
 * The builds' servers run side by side and take their windows in turn, round after round.
 * Short windows mislead: V8's optimising compiler still runs after 1,000 requests (12k to 1,030k
 * instructions a request in windows of one build) and a major GC landing in one window but not
 * the other moves it 10 % or more; count 2,000 or more after 5,000 warm-up, 3 rounds
 * (`callgrind_annotate` on a window's dump shows where).
 *
 *   npx tsc -b && node dist/bench/instructions.js --build /path/to/old/checkout --build .
 *     [--requests 2000] [--warmup 5000] [--connections 8] [--rounds 3] [--pg URL]
 *     [--variants oncely-sqlite,oncely-postgres,oncely-postgres-deferred] [--modes new,replay]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { postUntilAnswered } from './anchors-check.js';
import { exitOnBadArgs, readBenchArgs } from './bench-args.js';
import { CallgrindServer } from './instructions-server.js';
import { failedAnswers, resent, sendFixedLoad } from './instructions-load.js';
import {
  MODES,
  parseVariantList,
  rowKey,
  variantOf,
  type AnchorsRowId,
  type Mode,
} from './anchors-variants.js';

const DEFAULT_VARIANTS = 'oncely-sqlite,oncely-postgres,oncely-postgres-deferred';

/**
 * With default flags a window's count swung by 10–25 % within one build, mostly by whether a
 * mark-compact or a TurboFan compile landed in it; these pin the young generation's size (so
 * scavenges follow allocation) and keep GC off background threads and idle-time tuning.
 */
const STEADY_GC_FLAGS = [
  '--min-semi-space-size=16',
  '--max-semi-space-size=16',
  '--no-memory-reducer',
  '--single-threaded-gc',
];

const USAGE = `usage: node dist/bench/instructions.js [options]
  Instructions per request (valgrind's callgrind) of bench/anchors' routes in the durable table,
  for each build given, and each build ÷ the first. Needs valgrind; the builds must be built.
  --build DIR        a checkout whose dist/bench/anchors-server.js is measured; repeat it to
                     compare (default: this checkout)
  --requests N       measured requests per row, mode and round (default 2000)
  --warmup N         requests per row and mode before counting starts (default 5000)
  --connections N    requests in flight at once (default 4)
  --rounds N         measured windows per row and mode, builds taking turns (default 3)
  --variants LIST    oncely rows of bench/anchors (default ${DEFAULT_VARIANTS})
  --modes LIST       new, replay or both (default new,replay)
  --pg URL           PostgreSQL for the PostgreSQL rows (default $ONCELY_TEST_POSTGRES_URL)
  --keep-dumps       keep each window's callgrind dump (the folder is printed), for
                     callgrind_annotate: where a build's extra instructions go
  --steady-gc        each server with a fixed young generation and GC on one thread, so a
                     window's count tracks what the build allocates, not when a GC lands:
                     ${STEADY_GC_FLAGS.join(' ')}
  --help             this text`;

interface Options {
  builds: string[];
  requests: number;
  warmup: number;
  connections: number;
  rounds: number;
  rows: AnchorsRowId[];
  modes: Mode[];
  pgUrl: string | undefined;
  keepDumps: boolean;
  /** node flags of every server (STEADY_GC_FLAGS with --steady-gc). */
  nodeFlags: readonly string[];
}

function readOptions(): Options {
  const { values } = readBenchArgs('instructions', USAGE, {
    options: {
      build: { type: 'string', multiple: true },
      requests: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      rounds: { type: 'string' },
      variants: { type: 'string' },
      modes: { type: 'string' },
      pg: { type: 'string' },
      'keep-dumps': { type: 'boolean' },
      'steady-gc': { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  const whole = (name: string, raw: string | undefined, fallback: number, min = 1): number => {
    const n = raw === undefined ? fallback : Number(raw);
    if (!Number.isSafeInteger(n) || n < min)
      exitOnBadArgs('instructions', `--${name} must be a whole number >= ${min}, got ${raw}`);
    return n;
  };
  const modes = (values.modes ?? MODES.join(',')).split(',').map((m) => m.trim());
  if (modes.some((m) => !(MODES as readonly string[]).includes(m)))
    exitOnBadArgs('instructions', `--modes takes ${MODES.join(', ')}; got ${values.modes}`);
  const variants = parseVariantList(values.variants ?? DEFAULT_VARIANTS);
  const notOncely = variants.find((id) => !variantOf(id).oncely);
  if (notOncely) exitOnBadArgs('instructions', `--variants: ${notOncely} is not an oncely row`);
  return {
    builds: (values.build ?? ['.']).map((dir) => resolve(dir)),
    requests: whole('requests', values.requests, 2000),
    warmup: whole('warmup', values.warmup, 5000, 0),
    connections: whole('connections', values.connections, 4),
    rounds: whole('rounds', values.rounds, 3),
    rows: variants.map((variant) => ({ variant, table: 'durable' as const })),
    modes: MODES.filter((m) => modes.includes(m)),
    pgUrl: values.pg ?? (process.env['ONCELY_TEST_POSTGRES_URL'] || undefined),
    keepDumps: values['keep-dumps'] === true,
    nodeFlags: values['steady-gc'] === true ? STEADY_GC_FLAGS : [],
  };
}

interface Build {
  readonly dir: string;
  readonly server: CallgrindServer;
  readonly url: string;
}

async function startBuilds(options: Options, work: string): Promise<Build[]> {
  const needsPg = options.rows.some((row) => variantOf(row.variant).needs === 'postgres');
  if (needsPg && !options.pgUrl) exitOnBadArgs('instructions', 'no --pg URL for PostgreSQL rows');
  return Promise.all(
    options.builds.map(async (dir, i) => {
      const own = join(work, `build-${i}`);
      const setup = {
        dir: mkdtempSync(join(work, `db-${i}-`)),
        rows: options.rows,
        ...(needsPg
          ? { postgres: { url: options.pgUrl!, schema: `instructions_${process.pid}_${i}` } }
          : {}),
      };
      rmSync(own, { recursive: true, force: true });
      const server = new CallgrindServer(
        join(dir, 'dist/bench/anchors-server.js'),
        setup,
        mkdtempSync(own),
        options.nodeFlags,
      );
      return { dir, server, url: await server.ready };
    }),
  );
}

/** Instructions per request of one window: `requests` requests of the row and mode. */
async function window(
  build: Build,
  row: AnchorsRowId,
  mode: Mode,
  key: string,
  requests: number,
  connections: number,
  counted: boolean,
): Promise<number> {
  const path = `/${rowKey(row)}`;
  if (mode === 'replay') await postUntilAnswered(`${build.url}${path}`, key);
  if (counted) await build.server.start();
  const statuses = await sendFixedLoad({ url: build.url, path, mode, key, requests, connections });
  const instructions = counted ? await build.server.stop() : Number.NaN;
  const failed = failedAnswers(statuses);
  if (failed !== '') throw new Error(`bench/instructions: ${path} ${mode}: answers ${failed}`);
  return instructions / requests;
}

const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const thousands = (n: number): string => `${Math.round(n / 1000).toLocaleString('en-US')}k`;

function report(options: Options, counts: Map<string, number[][]>): void {
  console.log(
    `instructions per request (callgrind), median of ${options.rounds} round(s) [min–max]`,
  );
  options.builds.forEach((dir, i) => console.log(`  build ${i}: ${dir}`));
  if (resent > 0) console.log(`  ${resent} request(s) sent again after ECONNRESET`);
  for (const [name, perBuild] of counts) {
    const base = median(perBuild[0]!);
    const cells = perBuild.map((runs, i) => {
      const m = median(runs);
      const range = `[${thousands(Math.min(...runs))}–${thousands(Math.max(...runs))}]`;
      return `${thousands(m)} ${range}${i === 0 ? '' : ` ×${(m / base).toFixed(3)}`}`;
    });
    console.log(`  ${name.padEnd(40)} ${cells.join('   ')}`);
  }
}

async function main(): Promise<void> {
  const options = readOptions();
  const work = mkdtempSync(join(tmpdir(), 'oncely-instructions-'));
  const builds = await startBuilds(options, work);
  const counts = new Map<string, number[][]>();
  const tag = `${process.pid}-${Date.now()}`;
  try {
    for (const row of options.rows)
      for (const mode of options.modes)
        for (const [i, build] of builds.entries())
          await window(
            build,
            row,
            mode,
            `${tag}-w${i}-${row.variant}-${mode}`,
            options.warmup,
            options.connections,
            false,
          );
    for (let round = 0; round < options.rounds; round++)
      for (const row of options.rows)
        for (const mode of options.modes) {
          const name = `${rowKey(row)} ${mode}`;
          const perBuild = counts.get(name) ?? builds.map(() => []);
          counts.set(name, perBuild);
          // Builds take turns, the first changing each round.
          for (const k of builds.keys()) {
            const i = (k + round) % builds.length;
            const key = `${tag}-r${round}-b${i}-${row.variant}-${mode}`;
            perBuild[i]!.push(
              await window(builds[i]!, row, mode, key, options.requests, options.connections, true),
            );
          }
        }
    report(options, counts);
  } finally {
    await Promise.all(builds.map((build) => build.server.close()));
    if (options.keepDumps) console.error(`instructions: callgrind dumps kept in ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});
