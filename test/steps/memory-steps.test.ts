import {
  createMemoryStepStore,
  createMemoryStore,
  type MemoryTx,
} from '#oncely/stores/memory/index.js';
import { runStepsConformance } from './steps-conformance.js';

runStepsConformance<MemoryTx>('memory', async () => {
  const store = createMemoryStore();
  return {
    store,
    steps: createMemoryStepStore(store),
    write: async ({ tx }, id) => tx.set('effects', id, (tx.get<number>('effects', id) ?? 0) + 1),
    count: async (id) => store.read<number>('effects', id) ?? 0,
    forgets: true,
    close: () => store.close(),
  };
});
