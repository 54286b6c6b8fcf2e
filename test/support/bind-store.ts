import type { LedgerStore } from '#oncely/ledger/index.js';

/** The store's methods bound to it, so a test can replace one and spread the rest. */
export function bindStore<Tx>(store: LedgerStore<Tx>): LedgerStore<Tx> {
  return {
    name: store.name,
    durability: store.durability,
    capabilities: store.capabilities,
    get: store.get.bind(store),
    claim: store.claim.bind(store),
    swap: store.swap.bind(store),
    renew: store.renew.bind(store),
    remove: store.remove.bind(store),
    transaction: store.transaction.bind(store),
    complete: store.complete.bind(store),
    sweep: store.sweep.bind(store),
    backlog: store.backlog.bind(store),
    close: store.close.bind(store),
    ready: store.ready.bind(store),
    sql: store.sql.bind(store),
    housekeep: store.housekeep.bind(store),
    isUnavailable: store.isUnavailable.bind(store),
    tuning: store.tuning,
  };
}
