import { createRequire } from 'node:module';
import type { PgPoolClient, PgQueryConfig } from './pg-pool.js';

/**
 * Why a statement list sent with one Sync failed: `failedAt` is the place (0-based) of the
 * statement that failed (then the server rolled back what ran before it), or the list's length
 * when the commit at Sync failed (a deferred constraint) or the connection was lost (then whether
 * it committed is not known).
 */
export type OneSyncFailure = Error & { readonly failedAt: number };

export function isOneSyncFailure(error: unknown): error is OneSyncFailure {
  return error instanceof Error && typeof (error as { failedAt?: unknown }).failedAt === 'number';
}

/**
 * Sends `statements` as one implicit transaction, if `client` is node-postgres's: each one's
 * Parse (the first time the connection sees its name), Bind, Describe and Execute, and a single
 * Sync behind the last. PostgreSQL runs the messages up to a Sync as one transaction when no BEGIN
 * opened one: the Sync commits it, and a failure skips every message up to the Sync and rolls
 * back what ran (the protocol's "Pipelining" section). So no BEGIN and no COMMIT, and the driver
 * parses one answer (one ReadyForQuery) for the whole list instead of one per statement: what a
 * statement costs node on pg is mostly its own query's bookkeeping (docs/performance.md). Resolves
 * once committed; rejects with a {@link OneSyncFailure}.
 *
 * Returns undefined when the client is not a pg Client (another driver, a test double): the
 * caller then sends BEGIN … COMMIT as queries. It reaches below pg's `query` (a subclass of the
 * client's own Query class, its connection's message writers), as pg-cursor does. Queries
 * pipelined ahead of the list may still be answering: their ParseCompletes are theirs, told apart
 * by pg's active query.
 */
export function oneSyncSender(
  client: PgPoolClient,
): ((statements: readonly PgQueryConfig[]) => Promise<void>) | undefined {
  const Query = (client.constructor as { Query?: QueryClass }).Query;
  const connection = (client as { connection?: Partial<PgConnection> }).connection;
  const prepareValue = valueMapper();
  const active = (client as { _getActiveQuery?: () => unknown })._getActiveQuery;
  if (
    typeof Query !== 'function' ||
    typeof active !== 'function' ||
    prepareValue === undefined ||
    !isPgConnection(connection) ||
    typeof (client as { query?: unknown }).query !== 'function'
  )
    return undefined;
  const Group = groupQueryClass(Query);
  return (statements) =>
    new Promise<void>((resolve, reject) => {
      const group = new Group(
        statements,
        prepareValue,
        () => active.call(client),
        (error) => (error === undefined ? resolve() : reject(error)),
      );
      (client as unknown as { query(q: unknown): unknown }).query(group);
    });
}

/** The slice of pg's Connection the group writes to and reads from. */
interface PgConnection {
  parse(config: { text: string; name: string }): void;
  /** Values already in their text form (or Buffers, or null): no mapper. */
  bind(config: { portal: string; statement: string; values: unknown[] }): void;
  describe(config: { type: 'P'; name: string }): void;
  execute(config: { portal: string }): void;
  sync(): void;
  on(event: 'parseComplete', listener: () => void): void;
  off(event: 'parseComplete', listener: () => void): void;
  readonly stream: { cork?: () => void; uncork?: () => void };
  /** Names the server has prepared on this connection, and those on their way: pg's own books. */
  readonly parsedStatements: Record<string, string | undefined>;
  readonly submittedNamedStatements: Record<string, string | undefined>;
}

function isPgConnection(c: Partial<PgConnection> | undefined): c is PgConnection {
  return (
    c !== undefined &&
    ['parse', 'bind', 'describe', 'execute', 'sync', 'on', 'off'].every(
      (method) => typeof c[method as keyof PgConnection] === 'function',
    ) &&
    typeof c.parsedStatements === 'object' &&
    typeof c.submittedNamedStatements === 'object' &&
    typeof c.stream === 'object'
  );
}

/**
 * pg's Query, as far as the group uses it: its handlers count the answers, its results hold them.
 */
interface PgQuery {
  callback?: (error: Error | null) => void;
  _results: unknown;
  _result: { command: string | null };
}
type QueryClass = new (config: { text: string }) => PgQuery;

type GroupQueryClass = new (
  statements: readonly PgQueryConfig[],
  prepareValue: (value: unknown) => unknown,
  activeQuery: () => unknown,
  done: (error?: OneSyncFailure) => void,
) => PgQuery;

const groupClasses = new WeakMap<QueryClass, GroupQueryClass>();

/**
 * The group as a subclass of the client's Query class: a pipelined pg client takes no other kind
 * of query, and its handlers already collect one result per statement of a multi-result answer.
 * One class per pg copy (an app may hold a pg of its own beside ours).
 */
function groupQueryClass(Query: QueryClass): GroupQueryClass {
  let Group = groupClasses.get(Query);
  if (Group !== undefined) return Group;
  Group = class extends (Query as new (config: { text: string }) => PgQuery & object) {
    /** The statements this group sends a Parse for; the server answers ParseCompletes in order. */
    private readonly parsing: PgQueryConfig[] = [];
    private parsed = 0;
    /** The statement whose values had no text form: nothing was sent. */
    private unsentFrom: number | undefined;
    private connection: PgConnection | undefined;
    private readonly onParsed = (): void => {
      // A ParseComplete of a query pipelined ahead of this one is that query's, not ours.
      if (this.activeQuery() !== this) return;
      const statement = this.parsing[this.parsed++];
      if (statement === undefined || this.connection === undefined) return;
      this.connection.parsedStatements[statement.name] = statement.text;
      delete this.connection.submittedNamedStatements[statement.name];
    };

    constructor(
      private readonly statements: readonly PgQueryConfig[],
      private readonly prepareValue: (value: unknown) => unknown,
      private readonly activeQuery: () => unknown,
      done: (error?: OneSyncFailure) => void,
    ) {
      super({ text: 'oncely: one implicit transaction' });
      this.callback = (error) => {
        this.forgetUnparsed();
        if (error === null) return done();
        const failedAt =
          this.unsentFrom ?? (fromStatement(error) ? this.completed() : this.statements.length);
        done(Object.assign(error, { failedAt }));
      };
    }

    submit(connection: PgConnection): Error | null {
      // Every value in its text form first: one that cannot be (a circular object) fails its
      // statement before anything is written, and pg answers the error (on the next tick).
      const values: unknown[][] = [];
      for (const [i, statement] of this.statements.entries()) {
        try {
          values.push(statement.values.map((value) => this.prepareValue(value)));
        } catch (error) {
          this.unsentFrom = i;
          return error instanceof Error ? error : new Error(String(error));
        }
      }
      this.connection = connection;
      connection.on('parseComplete', this.onParsed);
      connection.stream.cork?.();
      try {
        for (const [i, statement] of this.statements.entries()) {
          const { name, text } = statement;
          if (
            connection.parsedStatements[name] === undefined &&
            connection.submittedNamedStatements[name] === undefined
          ) {
            connection.parse({ text, name });
            connection.submittedNamedStatements[name] = text;
            this.parsing.push(statement);
          }
          connection.bind({ portal: '', statement: name, values: values[i]! });
          connection.describe({ type: 'P', name: '' });
          connection.execute({ portal: '' });
        }
        connection.sync();
      } finally {
        connection.stream.uncork?.();
      }
      return null;
    }

    /** How many statements completed before the answer ended: each one adds a result. */
    private completed(): number {
      if (Array.isArray(this._results)) return this._results.length;
      return this._result.command === null ? 0 : 1;
    }

    /**
     * A failure skips the Parse messages behind it: those names were never prepared, so they
     * leave pg's books (the next query that uses one sends its Parse again).
     */
    private forgetUnparsed(): void {
      const connection = this.connection;
      if (connection === undefined) return;
      connection.off('parseComplete', this.onParsed);
      for (const statement of this.parsing.slice(this.parsed))
        delete connection.submittedNamedStatements[statement.name];
    }
  } as unknown as GroupQueryClass;
  groupClasses.set(Query, Group);
  return Group;
}

/**
 * An error the server raised for a statement (pg's DatabaseError, with a severity), rather than
 * the connection's end: a lost socket, or a FATAL error that closes the session, fails no one
 * statement.
 */
function fromStatement(error: Error): boolean {
  const severity = (error as { severity?: unknown }).severity;
  return typeof severity === 'string' && severity !== 'FATAL' && severity !== 'PANIC';
}

let prepareValue: ((value: unknown) => unknown) | null | undefined;

/** pg's own conversion of a parameter to its text form (arrays, Buffers, Dates), loaded once. */
function valueMapper(): ((value: unknown) => unknown) | undefined {
  if (prepareValue === undefined) {
    try {
      const utils = createRequire(import.meta.url)('pg/lib/utils.js') as {
        prepareValue?: (value: unknown) => unknown;
      };
      prepareValue = typeof utils.prepareValue === 'function' ? utils.prepareValue : null;
    } catch {
      prepareValue = null;
    }
  }
  return prepareValue ?? undefined;
}
