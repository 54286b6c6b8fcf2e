/**
 * The rows of bench/anchors: which idempotency layer guards the route, where it keeps its keys,
 * and what an acknowledged request survives. Shared by the bench (main thread), its server thread
 * and the report; it loads none of the libraries it names.
 */

/** What an acknowledged request's key survives (docs/durability.md). */
export type Durability = 'durable' | 'process' | 'memory';

/** durable: a power cut; process: a crash of the app's process; memory: nothing past a restart. */
export const DURABILITY_RANK: Readonly<Record<Durability, number>> = {
  durable: 2,
  process: 1,
  memory: 0,
};

/** new: every request a fresh Idempotency-Key; replay: every request one key, answered before. */
export const MODES = ['new', 'replay'] as const;
export type Mode = (typeof MODES)[number];

/**
 * The tables: what every row's effect survives. durable: SQLite WAL, synchronous = FULL, oncely at
 * `durability: 'durable'`; process: synchronous = NORMAL, oncely at `durability: 'process'`.
 */
export const TABLES = ['durable', 'process'] as const;
export type TableDurability = (typeof TABLES)[number];

/** Each table's heading: what the effect and oncely's store were set to. */
export const TABLE_TITLES: Readonly<Record<TableDurability, string>> = {
  durable: "durable table: every effect at synchronous = FULL, oncely at durability 'durable'",
  process: "process table: every effect at synchronous = NORMAL, oncely at durability 'process'",
};

/** One row of one table: a variant with its effect at the table's durability. */
export interface AnchorsRowId {
  readonly variant: VariantId;
  readonly table: TableDurability;
}

/** A row's name for the server and its route (`POST /<table>/<variant>`). */
export function rowKey(row: AnchorsRowId): string {
  return `${row.table}/${row.variant}`;
}

/** The rows to run, table by table, in the order of TABLES and of the variants given. */
export function anchorsRows(
  variants: readonly VariantId[],
  tables: readonly TableDurability[],
): AnchorsRowId[] {
  return TABLES.filter((table) => tables.includes(table)).flatMap((table) =>
    variants
      .filter((variant) => variantOf(variant).tables?.includes(table) ?? true)
      .map((variant) => ({ variant, table })),
  );
}

/** What an acknowledged key of the row survives: the weaker of its keys' and its effect's. */
export function rowDurability(keys: Durability | 'effect', table: TableDurability): Durability {
  if (keys === 'effect') return table;
  return DURABILITY_RANK[keys] < DURABILITY_RANK[table] ? keys : table;
}

/** Reads `--durability a,b`: tables by name, in TABLES' order; refuses an unknown one. */
export function parseTableList(raw: string): TableDurability[] {
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const bad = names.find((name) => !(TABLES as readonly string[]).includes(name));
  if (bad !== undefined || names.length === 0)
    throw new Error(
      `bench/anchors: --durability takes ${TABLES.join(', ')}; got ${JSON.stringify(raw)}`,
    );
  return TABLES.filter((table) => names.includes(table));
}

/**
 * How fresh keys are made: 'sequential' (`<prefix>-1`, `<prefix>-2` …: each lands next to the
 * last in a B-tree) or 'uuid' (random UUIDv4, as most clients send: each lands anywhere).
 */
export type KeyShape = 'sequential' | 'uuid';
export const KEY_SHAPES: readonly KeyShape[] = ['sequential', 'uuid'];

export const VARIANT_IDS = [
  'none',
  'bare-express',
  'express-idempotency',
  'node-idempotency-memory',
  'node-idempotency-redis',
  'powertools-redis',
  'oncely-sqlite',
  'oncely-postgres',
  'oncely-postgres-deferred',
] as const;
export type VariantId = (typeof VARIANT_IDS)[number];

export interface Variant {
  readonly id: VariantId;
  /** The row's name in the table. */
  readonly label: string;
  /** Where the idempotency records live. */
  readonly keys: string;
  /** Where the effect (one INSERT) is written, and how. */
  readonly effect: string;
  /**
   * What its keys survive. 'effect': as the table's effect (the floor has no keys; oncely's keys
   * commit with the effect); 'redis': read from the server's own settings at start
   * (anchors-redis.ts). A row's durability is the weaker of this and its table's.
   */
  readonly durability: Durability | 'effect' | 'redis';
  readonly needs?: 'redis' | 'postgres';
  readonly oncely: boolean;
  /**
   * A reference row, not a middleware: no dedupe check, no comparison; this is said in its check
   * column instead.
   */
  readonly reference?: string;
  /** The tables it has a row in. @default every table */
  readonly tables?: readonly TableDurability[];
}

const OWN_INSERT = 'SQLite, its own autocommit INSERT (durable: one fsync each)';

export const VARIANTS: readonly Variant[] = [
  {
    id: 'none',
    label: 'no guard (floor)',
    keys: 'none',
    effect: OWN_INSERT,
    durability: 'effect',
    oncely: false,
    reference: 'n/a (no guard: every request runs the effect)',
  },
  {
    // What Express costs a request whose route does nothing but answer: every middleware's replay
    // still goes through express.json and writes a response. Read the replay columns by it.
    id: 'bare-express',
    label: 'Express alone (no effect)',
    keys: 'none',
    effect: 'none: the route answers a constant',
    durability: 'memory',
    oncely: false,
    reference: 'n/a (no guard, no effect: what express.json and an answer cost)',
    tables: ['process'],
  },
  {
    id: 'express-idempotency',
    label: 'express-idempotency',
    keys: 'memory (its default adapter)',
    effect: OWN_INSERT,
    durability: 'memory',
    oncely: false,
  },
  {
    id: 'node-idempotency-memory',
    label: '@node-idempotency memory',
    keys: 'memory',
    effect: OWN_INSERT,
    durability: 'memory',
    oncely: false,
  },
  {
    id: 'node-idempotency-redis',
    label: '@node-idempotency redis',
    keys: 'Redis (node-redis 4)',
    effect: OWN_INSERT,
    durability: 'redis',
    needs: 'redis',
    oncely: false,
  },
  {
    id: 'powertools-redis',
    label: 'powertools redis',
    keys: 'Redis (@redis/client 6)',
    effect: OWN_INSERT,
    durability: 'redis',
    needs: 'redis',
    oncely: false,
  },
  {
    id: 'oncely-sqlite',
    label: 'oncely SQLite',
    keys: 'SQLite, the same file',
    effect: 'SQLite, in the ledger transaction (group commit when durable)',
    durability: 'effect',
    oncely: true,
  },
  {
    id: 'oncely-postgres',
    label: 'oncely PostgreSQL',
    keys: 'PostgreSQL',
    effect: 'PostgreSQL, in the ledger transaction',
    durability: 'durable',
    needs: 'postgres',
    oncely: true,
    tables: ['durable'],
  },
  {
    id: 'oncely-postgres-deferred',
    label: 'oncely PostgreSQL deferred',
    keys: 'PostgreSQL',
    effect:
      "PostgreSQL, deferred into the ledger transaction (writes: 'deferred', grouped commits)",
    durability: 'durable',
    needs: 'postgres',
    oncely: true,
    tables: ['durable'],
  },
];

export function variantOf(id: VariantId): Variant {
  return VARIANTS.find((v) => v.id === id)!;
}

/** Reads `--variants a,b` (ids or unique prefixes); refuses an unknown name, naming the known ones. */
export function parseVariantList(raw: string): VariantId[] {
  const ids: VariantId[] = [];
  for (const name of raw.split(',').map((s) => s.trim())) {
    if (name === '') continue;
    const exact = VARIANT_IDS.find((id) => id === name);
    const matches = exact ? [exact] : VARIANT_IDS.filter((id) => id.startsWith(name));
    if (matches.length !== 1)
      throw new Error(
        `bench/anchors: --variants: ${JSON.stringify(name)} is ${matches.length === 0 ? 'unknown' : 'ambiguous'}; known: ${VARIANT_IDS.join(', ')}`,
      );
    if (!ids.includes(matches[0]!)) ids.push(matches[0]!);
  }
  if (ids.length === 0) throw new Error('bench/anchors: --variants names no variant');
  return ids;
}
