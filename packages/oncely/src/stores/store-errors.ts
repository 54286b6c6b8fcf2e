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

/** A store used after close(). */
export class StoreClosedError extends OncelyError {
  constructor(store: string) {
    super('store_closed', `${store} store is closed`);
    this.name = 'StoreClosedError';
  }
}
