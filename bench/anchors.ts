/**
 * The comparison a user makes before picking an idempotency middleware: one Express app, one
 * route whose effect is one INSERT of an order into SQLite (better-sqlite3, WAL), driven by
 * autocannon, behind each of:
 *   - nothing (the floor); and, in the process table, nothing and no effect (Express alone:
 *     what its replay columns are read by);
 *   - express-idempotency (its in-memory adapter);
 *   - @node-idempotency (memory, and Redis);
 *   - @aws-lambda-powertools/idempotency (Redis), through makeIdempotent;
 *   - oncely (oncely/express, after express.json) on SQLite, and on PostgreSQL.
 * Two tables: 'durable', every effect at synchronous = FULL and oncely's SQLite store at
 * `durability: 'durable'`; 'process', every effect at synchronous = NORMAL and oncely at
 * `durability: 'process'` (the set-up most users of Redis-backed middlewares run; the PostgreSQL
 * rows are in the durable table only). For each row: new keys (a fresh Idempotency-Key per
 * request) and replays (one key, already answered), req/s and p99, the durability of an
 * acknowledged key, and oncely ÷ each other and ÷ the unguarded app of its table. Before timing,
 * each row is checked to run the effect once for a key sent twice. How each library is set up:
 * anchors-rivals.ts and anchors-oncely.ts; the numbers: docs/performance.md.
 *
 *   npm run build && node dist/bench/anchors.js [--seconds 5] [--rounds 3] [--connections 50]
 *                      [--pg URL] [--redis URL] [--variants a,b] [--durability durable,process]
 */
import type { AnchorsOptions } from './anchors-run.js';
import {
  KEY_SHAPES,
  MODES,
  parseTableList,
  parseVariantList,
  TABLES,
  VARIANT_IDS,
  type KeyShape,
  type Mode,
} from './anchors-variants.js';
import { readBenchArgs } from './bench-args.js';

/** @default seconds 5, rounds 3, connections 50 (as in the comparison users would run) */
const DEFAULTS = {
  seconds: 5,
  rounds: 3,
  connections: 50,
  redis: 'redis://127.0.0.1:6379',
} as const;

const USAGE = `usage: node dist/bench/anchors.js [options]
  oncely against the idempotency middlewares people install today, in one Express app whose
  effect is one SQLite INSERT (WAL); one table per durability (durable: synchronous = FULL,
  oncely 'durable'; process: synchronous = NORMAL, oncely 'process'); new keys and replays,
  req/s and p99, the durability of each row, oncely ÷ each other and ÷ the unguarded app.
  --seconds N       length of each measured run (default ${DEFAULTS.seconds})
  --rounds N        rounds; variants interleaved in each, the median run kept (default ${DEFAULTS.rounds})
  --connections N   autocannon connections (default ${DEFAULTS.connections})
  --pg URL          PostgreSQL for the oncely PostgreSQL row (default: $ONCELY_TEST_POSTGRES_URL; none: skipped)
  --redis URL       Redis for the Redis rows (default ${DEFAULTS.redis}; unreachable: skipped)
  --variants LIST   comma-separated, of: ${VARIANT_IDS.join(', ')} (default: all)
  --durability LIST the tables: ${TABLES.join(', ')} or both (default ${TABLES.join(',')})
  --modes LIST      new, replay or both (default new,replay)
  --keys SHAPE      fresh keys: sequential (prefix-1, prefix-2 …) or uuid (random UUIDv4, as
                    most clients send) (default sequential)
  --cpu-prof DIR    profile the server process (node --cpu-prof) into DIR
  --check-only      run the dedupe check of each variant and stop (no timing)
  --help            this text`;

function readOptions(): AnchorsOptions {
  const { values } = readBenchArgs('anchors', USAGE, {
    options: {
      seconds: { type: 'string' },
      rounds: { type: 'string' },
      connections: { type: 'string' },
      pg: { type: 'string' },
      redis: { type: 'string' },
      variants: { type: 'string' },
      durability: { type: 'string' },
      modes: { type: 'string' },
      keys: { type: 'string' },
      'cpu-prof': { type: 'string' },
      'check-only': { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  const whole = (name: string, raw: unknown, fallback: number): number => {
    const n = raw === undefined ? fallback : Number(raw);
    if (!Number.isSafeInteger(n) || n < 1)
      throw new Error(`bench/anchors: --${name} must be a whole number >= 1, got ${String(raw)}`);
    return n;
  };
  const text = (name: string, raw: unknown): string | undefined => {
    if (raw === undefined) return undefined;
    if (typeof raw !== 'string' || raw === '')
      throw new Error(`bench/anchors: --${name} needs a value`);
    return raw;
  };
  return {
    seconds: whole('seconds', values.seconds, DEFAULTS.seconds),
    rounds: whole('rounds', values.rounds, DEFAULTS.rounds),
    connections: whole('connections', values.connections, DEFAULTS.connections),
    pgUrl: text('pg', values.pg) ?? (process.env['ONCELY_TEST_POSTGRES_URL'] || undefined),
    redisUrl: text('redis', values.redis) ?? DEFAULTS.redis,
    variants: parseVariantList(text('variants', values.variants) ?? VARIANT_IDS.join(',')),
    tables: parseTableList(text('durability', values.durability) ?? TABLES.join(',')),
    modes: parseModes(text('modes', values.modes) ?? MODES.join(',')),
    keys: parseKeyShape(text('keys', values.keys) ?? 'sequential'),
    cpuProfDir: text('cpu-prof', values['cpu-prof']),
    checkOnly: values['check-only'] === true,
  };
}

function parseModes(raw: string): Mode[] {
  const modes = raw.split(',').map((m) => m.trim());
  const bad = modes.find((m) => !(MODES as readonly string[]).includes(m));
  if (bad !== undefined || modes.length === 0)
    throw new Error(`bench/anchors: --modes takes ${MODES.join(', ')}; got ${JSON.stringify(raw)}`);
  return MODES.filter((m) => modes.includes(m));
}

function parseKeyShape(raw: string): KeyShape {
  const shape = KEY_SHAPES.find((s) => s === raw);
  if (shape === undefined)
    throw new Error(
      `bench/anchors: --keys takes ${KEY_SHAPES.join(' or ')}; got ${JSON.stringify(raw)}`,
    );
  return shape;
}

async function main(): Promise<void> {
  const options = readOptions();
  // Loaded only for a run: `--help` and bad flags answer without the libraries under test.
  const { runAnchors } = await import('./anchors-run.js');
  await runAnchors(options);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});
