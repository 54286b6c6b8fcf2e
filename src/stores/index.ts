/**
 * The three LedgerStores. Each also has its own entry point (`stores/memory`, `stores/sqlite`,
 * `stores/postgres`) so an app loads only the driver it uses.
 */
export * from './memory/index.js';
export * from './sqlite/index.js';
export * from './postgres/index.js';
export { AsyncMutex } from './async-mutex.js';
