import { OncelyError } from '../contract/errors.js';

/**
 * A transaction handle used after its transaction ended (kept in a closure, used by a late
 * callback). Refused loudly: the write would otherwise land outside the transaction, or inside
 * another request's.
 */
export class TransactionEndedError extends OncelyError {
  constructor(store: string) {
    super('transaction_ended', `${store} transaction handle used after its transaction ended`);
    this.name = 'TransactionEndedError';
  }
}

/**
 * A store call made from inside a transaction of the same single-connection store: it would wait
 * for the transaction that is waiting for it. Use the transaction handle instead.
 */
export class NestedTransactionError extends OncelyError {
  constructor(store: string, method: string) {
    super('nested_transaction', `${store} store: ${method}() called inside one of its transactions; use the tx handle given to the effect`);
    this.name = 'NestedTransactionError';
  }
}

/** A store used after close(). */
export class StoreClosedError extends OncelyError {
  constructor(store: string) {
    super('store_closed', `${store} store is closed`);
    this.name = 'StoreClosedError';
  }
}
