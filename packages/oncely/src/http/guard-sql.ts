import { InvalidOptionError, OncelyError } from '../contract/errors.js';
import type { DeferredWrite } from '../ledger/deferred-writes.js';
import {
  SQL_DIALECTS,
  type SqlDialect,
  type SqlHandle,
  type SqlRunResult,
} from '../ledger/sql-handle.js';
import type { Step } from '../ledger/steps.js';

/**
 * `context.sql`: the transaction's SQL handle, plus `defer`, a write left for the commit. Deferred
 * writes run after the handler has answered, in order, in the transaction of the receipt; their
 * results are never seen. A route with `writes: 'deferred'` writes only this way.
 */
export interface GuardSql extends SqlHandle {
  defer(sql: string, params?: readonly unknown[]): void;
}

const NO_WRITES: readonly DeferredWrite[] = Object.freeze([]);

/**
 * What both kinds of `context.sql` share: the writes a handler defers, kept until it has answered
 * and then closed (a later defer is a bug, refused). Classes with prototype methods, not object
 * literals with getters: one is made for every keyed request.
 */
abstract class DeferringSql implements GuardSql {
  #writes: DeferredWrite[] | undefined;
  #closed = false;

  abstract readonly dialect: SqlDialect;
  abstract run(sql: string, params?: readonly unknown[]): Promise<SqlRunResult>;
  abstract get<R = Record<string, unknown>>(
    sql: string,
    params?: readonly unknown[],
  ): Promise<R | undefined>;
  abstract all<R = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<R[]>;

  defer(sql: string, params: readonly unknown[] = []): void {
    if (this.#closed)
      throw new OncelyError('deferred_after_answer', 'sql.defer() after the handler answered');
    if (typeof sql !== 'string' || sql.trim() === '')
      throw new InvalidOptionError('sql', sql, 'a non-empty SQL statement');
    if (!Array.isArray(params)) throw new InvalidOptionError('params', params, 'an array');
    (this.#writes ??= []).push({ sql, params: [...params] });
  }

  /** The writes deferred so far, in order; no more are taken after this. */
  close(): readonly DeferredWrite[] {
    this.#closed = true;
    return this.#writes ?? NO_WRITES;
  }
}

/** `context.sql` of a claimed route: the transaction's handle; deferred writes wait for the answer. */
export class ClaimedSql extends DeferringSql {
  readonly #handle: SqlHandle;
  /** A statement was sent: the route's transaction has begun (steps must come before it). */
  used = false;

  constructor(handle: SqlHandle) {
    super();
    this.#handle = handle;
  }

  get dialect(): SqlDialect {
    return this.#handle.dialect;
  }

  run(sql: string, params?: readonly unknown[]): Promise<SqlRunResult> {
    this.used = true;
    return this.#handle.run(sql, params);
  }

  get<R = Record<string, unknown>>(
    sql: string,
    params?: readonly unknown[],
  ): Promise<R | undefined> {
    this.used = true;
    return this.#handle.get<R>(sql, params);
  }

  all<R = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<R[]> {
    this.used = true;
    return this.#handle.all<R>(sql, params);
  }

  /**
   * `step` for a route on this handle: refused once the route's own transaction has begun. A
   * step commits on its own, before the receipt; begun after the route's statements it would
   * wait for the route's transaction (on SQLite, forever: one writer) and hold its locks across
   * the other service's call. The route's own writes come after its last step.
   */
  stepsBefore<Tx>(step: Step<Tx>): Step<Tx> {
    return (name, fn) =>
      this.used
        ? Promise.reject(
            new OncelyError(
              'step_after_writes',
              `step "${name}" after the route's own statements: call every step first, then write with context.sql (or write inside the step)`,
            ),
          )
        : step(name, fn);
  }
}

/**
 * `context.sql` of a route with `writes: 'deferred'`: no transaction is open while its handler
 * runs, so only `defer` works; the rest reject, saying so.
 */
export class DeferredOnlySql extends DeferringSql {
  readonly #storeName: string;

  constructor(storeName: string) {
    super();
    this.#storeName = storeName;
  }

  get dialect(): SqlDialect {
    const name = this.#storeName;
    if ((SQL_DIALECTS as readonly string[]).includes(name)) return name as SqlDialect;
    throw new OncelyError('no_sql', `the ${name} store has no SQL`);
  }

  run(): Promise<never> {
    return Promise.reject(noTransaction());
  }

  get(): Promise<never> {
    return Promise.reject(noTransaction());
  }

  all(): Promise<never> {
    return Promise.reject(noTransaction());
  }
}

/** What a deferred route's handler gets for `context.tx`, or for an awaited statement. */
export function noTransaction(): OncelyError {
  return new OncelyError(
    'writes_deferred',
    "this route defers its writes (writes: 'deferred'): no transaction is open while the handler runs; write with context.sql.defer()",
  );
}
