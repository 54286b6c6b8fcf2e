import type { StepRecord, StepStore } from '../../../ledger/step-store.js';
import type { MemoryStore, MemoryTx } from './memory-store.js';

/** The memory table of the steps: one row per run of a request, its steps in order. */
const TABLE = 'oncely:steps';

interface RunRow {
  readonly steps: readonly StepRecord[];
  readonly expiresAt: number;
}

/**
 * The steps of a ledger on `store` (a memory store), kept in its own tables: a step's record is
 * staged in the step's transaction and applied with its other writes at commit. One row per
 * run, so two workers recording the same run conflict at commit (the memory store's optimistic
 * check) and two runs never do.
 */
export function createMemoryStepStore(store: MemoryStore): StepStore<MemoryTx> {
  const steps: StepStore<MemoryTx> = {
    name: 'memory',

    async resume(scope, key, runAt, expiresAt) {
      const id = runId(scope, key, runAt);
      const row = store.read<RunRow>(TABLE, id);
      if (row === undefined) return [];
      if (row.expiresAt < expiresAt)
        await store.transaction(async (tx) => {
          const now = tx.get<RunRow>(TABLE, id);
          if (now !== undefined) tx.set(TABLE, id, { ...now, expiresAt });
        });
      return [...row.steps];
    },

    async record(tx, step) {
      const id = runId(step.scope, step.key, step.runAt);
      const row = tx.get<RunRow>(TABLE, id) ?? { steps: [], expiresAt: step.expiresAt };
      if (row.steps.some((s) => s.position === step.position)) return false;
      const expiresAt = Math.max(row.expiresAt, step.expiresAt);
      tx.set(TABLE, id, { steps: [...row.steps, step], expiresAt });
      return true;
    },

    // Memory is the process's own: a finished run's steps are dropped with its receipt.
    async forget(tx, scope, key, runAt) {
      const id = runId(scope, key, runAt);
      if (tx.get<RunRow>(TABLE, id) !== undefined) tx.delete(TABLE, id);
    },

    async sweep(nowMs, limit) {
      const due = store
        .entries<RunRow>(TABLE)
        .filter(([, row]) => row.expiresAt <= nowMs)
        .sort(([, a], [, b]) => a.expiresAt - b.expiresAt);
      let deleted = 0;
      for (const [id] of due) {
        if (deleted >= limit) break;
        const removed = await store.transaction(async (tx) => {
          const row = tx.get<RunRow>(TABLE, id);
          if (row === undefined || row.expiresAt > nowMs) return 0;
          tx.delete(TABLE, id);
          return row.steps.length;
        });
        deleted += removed;
      }
      return deleted;
    },

    recordAlone: (step) => store.transaction((tx) => steps.record(tx, step)),

    ready: async () => {},
  };
  return steps;
}

/** One string per run; NUL cannot occur in a valid key. */
function runId(scope: string, key: string, runAt: number): string {
  return `${scope}\u0000${key}\u0000${runAt}`;
}
