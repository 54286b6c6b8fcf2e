/** The in-memory LedgerStore: tests, demos, single-process tools. */
export {
  createMemoryStore,
  type MemoryStore,
  type MemoryTx,
} from '../ledger/memory/memory-store.js';
export { createMemoryJournalStore } from '../journal/memory/memory-journal-store.js';
export { createMemoryStepStore } from '../ledger/memory/memory-step-store.js';
