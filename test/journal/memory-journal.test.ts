import { createMemoryJournalStore } from '../../src/stores/memory/index.js';
import { runJournalConformance } from './journal-conformance.js';

runJournalConformance('memory', async () => {
  const store = createMemoryJournalStore();
  return { store, close: () => store.close() };
});
