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

export const VARIANT_IDS = [
  'none',
  'express-idempotency',
  'node-idempotency-memory',
  'node-idempotency-redis',
  'powertools-redis',
  'oncely-sqlite',
  'oncely-postgres',
  'oncely-postgres-deferred',
  'oncely-sqlite-process',
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
  /** For a Redis row, read from the server's own settings at start (see redis-durability.ts). */
  readonly durability: Durability | 'redis';
  readonly needs?: 'redis' | 'postgres';
  readonly oncely: boolean;
}

const OWN_INSERT = 'SQLite, its own autocommit INSERT (one fsync each)';

export const VARIANTS: readonly Variant[] = [
  {
    id: 'none',
    label: 'no guard (floor)',
    keys: 'none',
    effect: OWN_INSERT,
    durability: 'durable',
    oncely: false,
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
    effect: 'SQLite, in the ledger transaction (group commit)',
    durability: 'durable',
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
  },
  {
    id: 'oncely-postgres-deferred',
    label: 'oncely PostgreSQL deferred',
    keys: 'PostgreSQL',
    effect: "PostgreSQL, deferred into the ledger transaction (writes: 'deferred', one round trip)",
    durability: 'durable',
    needs: 'postgres',
    oncely: true,
  },
  {
    id: 'oncely-sqlite-process',
    label: "oncely SQLite 'process'",
    keys: 'SQLite, the same file',
    effect: 'SQLite, in the ledger transaction (synchronous = NORMAL)',
    durability: 'process',
    oncely: true,
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
