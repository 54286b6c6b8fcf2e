import { createMemoryJournalStore } from '#oncely/stores/memory/index.js';
import { runJournalConformance } from './journal-conformance.js';
import { runEndpointConformance } from './endpoint-conformance.js';

const open = async () => {
  const store = createMemoryJournalStore();
  return { store, close: () => store.close() };
};
runJournalConformance('memory', open);
runEndpointConformance('memory', open);
