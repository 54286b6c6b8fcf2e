/** The in-memory LedgerStore: tests, demos, single-process tools. */
export { createMemoryStore, type MemoryStore, type MemoryTx } from './memory-store.js';
export { createMemoryJournalStore } from './memory-journal-store.js';
export { createMemoryStepStore } from './memory-step-store.js';
