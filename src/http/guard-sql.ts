import { InvalidOptionError, OncelyError } from '../contract/errors.js';
import type { DeferredWrite } from '../ledger/deferred-writes.js';
import { SQL_DIALECTS, type SqlDialect, type SqlHandle } from '../ledger/sql-handle.js';

/**
 * `context.sql`: the transaction's SQL handle, plus `defer`, a write left for the commit. Deferred
 * writes run after the handler has answered, in order, in the transaction of the receipt; their
 * results are never seen. A route with `writes: 'deferred'` writes only this way.
 */
export interface GuardSql extends SqlHandle {
  defer(sql: string, params?: readonly unknown[]): void;
}

/** The writes a handler defers; closed once it has answered (a later defer is a bug, refused). */
export class DeferredWrites {
  readonly list: DeferredWrite[] = [];
  #closed = false;

  add(sql: string, params: readonly unknown[] = []): void {
    if (this.#closed)
      throw new OncelyError('deferred_after_answer', 'sql.defer() after the handler answered');
    if (typeof sql !== 'string' || sql.trim() === '')
      throw new InvalidOptionError('sql', sql, 'a non-empty SQL statement');
    if (!Array.isArray(params)) throw new InvalidOptionError('params', params, 'an array');
    this.list.push({ sql, params: [...params] });
  }

  close(): readonly DeferredWrite[] {
    this.#closed = true;
    return this.list;
  }
}

/** `context.sql` of a claimed route: the transaction's handle; deferred writes wait for the answer. */
export function claimedSql(handle: SqlHandle, writes: DeferredWrites): GuardSql {
  return {
    get dialect() {
      return handle.dialect;
    },
    run: (sql, params) => handle.run(sql, params),
    get: (sql, params) => handle.get(sql, params),
    all: (sql, params) => handle.all(sql, params),
    defer: (sql, params) => writes.add(sql, params),
  };
}

/**
 * `context.sql` of a route with `writes: 'deferred'`: no transaction is open while its handler
 * runs, so only `defer` works; the rest reject, saying so.
 */
export function deferredOnlySql(storeName: string, writes: DeferredWrites): GuardSql {
  const refuse = (): Promise<never> => Promise.reject(noTransaction());
  return {
    get dialect(): SqlDialect {
      if ((SQL_DIALECTS as readonly string[]).includes(storeName)) return storeName as SqlDialect;
      throw new OncelyError('no_sql', `the ${storeName} store has no SQL`);
    },
    run: refuse,
    get: refuse,
    all: refuse,
    defer: (sql, params) => writes.add(sql, params),
  };
}

/** What a deferred route's handler gets for `context.tx`, or for an awaited statement. */
export function noTransaction(): OncelyError {
  return new OncelyError(
    'writes_deferred',
    "this route defers its writes (writes: 'deferred'): no transaction is open while the handler runs; write with context.sql.defer()",
  );
}
