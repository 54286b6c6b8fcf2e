import { createMemoryStore, type MemoryTx } from '#oncely/stores/memory/index.js';
import { runLedgerConformance } from './conformance.js';

runLedgerConformance<MemoryTx>('memory', async () => {
  const store = createMemoryStore();
  let n = 0;
  return {
    store,
    writeEffect: async (tx, id) => tx.set('effects', String(++n), { id }),
    countEffects: async (id) =>
      store.entries<{ id: string }>('effects').filter(([, v]) => v.id === id).length,
    close: () => store.close(),
  };
});
