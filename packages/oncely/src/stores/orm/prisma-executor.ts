import { InvalidOptionError } from '../../contract/errors.js';
import { SQL_DIALECTS, type SqlDialect } from '../../ledger/sql-handle.js';
import type { ExecutorRows, SqlExecutor } from './sql-executor.js';
import { unavailableBy } from './unavailable-errors.js';

/** What the executor uses of a Prisma client: raw statements and interactive transactions. */
export interface PrismaLike {
  $queryRawUnsafe(sql: string, ...values: unknown[]): PromiseLike<unknown>;
  $executeRawUnsafe(sql: string, ...values: unknown[]): PromiseLike<number>;
  // `any`: Prisma's own parameter type is its transaction client, which this slice does not name.
  $transaction<R>(fn: (tx: any) => Promise<R>, options?: PrismaTransactionOptions): Promise<R>;
}

/** The interactive transaction client a Prisma client hands its `$transaction` callback. */
export type PrismaTransactionOf<P> = P extends {
  $transaction<R>(fn: (tx: infer X) => Promise<R>, options?: never): Promise<R>;
}
  ? X
  : never;

/** Prisma's options of an interactive transaction, in ms. */
export interface PrismaTransactionOptions {
  readonly maxWait?: number;
  readonly timeout?: number;
}

export interface PrismaExecutorOptions {
  /** The database behind the client's driver adapter (@prisma/adapter-pg, @prisma/adapter-better-sqlite3). */
  readonly dialect: SqlDialect;
  /**
   * Passed to `$transaction`: how long a request waits for a connection and how long its
   * transaction may run before Prisma ends it (Prisma's own default, 5 s, is shorter than the
   * ledger's lease). @default { maxWait: 10000, timeout: 60000 }
   */
  readonly transaction?: PrismaTransactionOptions;
}

const VOID_COLUMN = /Failed to deserialize column of type 'void'/;

/** Prisma's error codes that say the database, not the statement, failed (its error reference). */
const UNAVAILABLE_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024']);
/** Driver adapter error kinds that say the same. */
const UNAVAILABLE_KINDS =
  /^(ConnectionClosed|DatabaseNotReachable|SocketTimeout|TooManyConnections|DatabaseDoesNotExist)/;

/**
 * A Prisma client (7, with a driver adapter) as an executor: the ledger's statements run through
 * `$queryRawUnsafe` (those that return rows) and `$executeRawUnsafe` (the others, for their
 * count) on the client or on the request's interactive transaction client
 * (`prisma.$transaction(async (tx) => …)`). A failed statement rejects with the database's own
 * error code (SQLSTATE), read from under Prisma's P2010.
 */
export function prismaExecutor<P extends PrismaLike>(
  prisma: P,
  options: PrismaExecutorOptions,
): SqlExecutor<PrismaTransactionOf<P>> {
  if (typeof prisma?.$queryRawUnsafe !== 'function' || typeof prisma.$transaction !== 'function')
    throw new InvalidOptionError('prisma', prisma, 'a Prisma client');
  const dialect = options?.dialect;
  if (!SQL_DIALECTS.includes(dialect))
    throw new InvalidOptionError('dialect', dialect, SQL_DIALECTS.join(' or '));
  const transactionOptions = { maxWait: 10_000, timeout: 60_000, ...options.transaction };
  async function run(
    on: PrismaLike,
    sql: string,
    params: readonly unknown[],
  ): Promise<ExecutorRows> {
    try {
      if (returnsRows(sql)) {
        const rows = (await on.$queryRawUnsafe(sql, ...params)) as Record<string, unknown>[];
        return { rows, rowCount: rows.length };
      }
      return { rows: [], rowCount: await on.$executeRawUnsafe(sql, ...params) };
    } catch (error) {
      // The statement ran; Prisma could not read a column of type void back
      // (`SELECT pg_advisory_xact_lock(…)`): there is nothing to read.
      if (VOID_COLUMN.test(String((error as Error)?.message))) return { rows: [], rowCount: 1 };
      throw databaseError(error);
    }
  }
  return {
    name: 'prisma',
    dialect,
    capabilities: { concurrentTransactions: dialect === 'postgres', endingMethods: [] },
    query: (sql, params) => run(prisma, sql, params),
    queryIn: (tx, sql, params) => run(tx as PrismaLike, sql, params),
    transaction: (fn) => prisma.$transaction((tx) => fn(tx), transactionOptions),
    isUnavailable: unavailableBy(dialect, prismaUnavailable),
    // An interactive transaction client has no $connect (Prisma's ITXClientDenyList).
    isTransaction: (value) =>
      typeof (value as PrismaLike)?.$queryRawUnsafe === 'function' &&
      typeof (value as { $connect?: unknown }).$connect !== 'function',
  };
}

/**
 * True when the statement's main part (after its WITH clauses, outside parentheses) is a query
 * or has RETURNING: `$queryRawUnsafe` gives its rows. Otherwise `$executeRawUnsafe` gives the
 * count of rows it changed, which `$queryRawUnsafe` would not.
 */
export function returnsRows(sql: string): boolean {
  let depth = 0;
  let top = '';
  for (const ch of sql) {
    if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if (depth === 0) top += ch;
  }
  const verbs =
    /\b(SELECT|VALUES|PRAGMA|INSERT|UPDATE|DELETE|CREATE|ALTER|DROP|LOCK|SET|BEGIN|COMMIT|ROLLBACK)\b/i;
  if (/\bRETURNING\b/i.test(top)) return true;
  // `(SELECT …) UNION ALL (SELECT …)`: every verb is in parentheses; the first one says.
  const verb = verbs.exec(top) ?? verbs.exec(sql);
  return verb !== null && /^(SELECT|VALUES|PRAGMA)$/i.test(verb[1]!);
}

/** The database's own error under Prisma's, with its SQLSTATE (or SQLite code) as `code`. */
function databaseError(error: unknown): unknown {
  const cause = driverCause(error);
  const code = cause?.originalCode;
  if (typeof code !== 'string') return error;
  return Object.assign(new Error(String(cause?.originalMessage ?? code), { cause: error }), {
    code,
  });
}

function driverCause(
  error: unknown,
): { originalCode?: unknown; originalMessage?: unknown; kind?: unknown } | undefined {
  const adapter = (error as { meta?: { driverAdapterError?: { cause?: unknown } } })?.meta
    ?.driverAdapterError;
  return (adapter?.cause ?? undefined) as ReturnType<typeof driverCause>;
}

function prismaUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
  const cause = driverCause(error);
  if (typeof cause?.kind === 'string' && UNAVAILABLE_KINDS.test(cause.kind)) return true;
  const original = cause?.originalCode;
  return (
    typeof original === 'string' &&
    /^(08|53|57P0[123]|SQLITE_(FULL|IOERR|BUSY|CANTOPEN))/.test(original)
  );
}
