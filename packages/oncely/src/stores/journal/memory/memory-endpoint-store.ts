import type { EndpointRecord, EndpointStore } from '../../../journal/endpoint.js';
import type { FinalRecord } from '../../../journal/intent.js';

/** What the endpoints do to the memory journal's intents. */
export interface MemoryIntentHooks {
  wake(id: string, nowMs: number): number;
  cancelPending(id: string, final: FinalRecord, nowMs: number): number;
}

/**
 * Endpoints in memory, next to the memory journal's intents. One process, one event loop: an
 * update runs whole between two awaits, which is the lock the SQL stores take on the row.
 */
export function createMemoryEndpointStore(
  open: () => void,
  intents: MemoryIntentHooks,
): EndpointStore {
  const rows = new Map<string, EndpointRecord>();
  return {
    async add(endpoint) {
      open();
      if (rows.has(endpoint.id)) return false;
      rows.set(endpoint.id, endpoint);
      return true;
    },
    get: async (id) => (open(), rows.get(id)),
    list: async () => (open(), [...rows.values()].sort((a, b) => (a.id < b.id ? -1 : 1))),
    async update(id, fn) {
      open();
      const current = rows.get(id);
      if (!current) return undefined;
      const [next, result] = fn(current);
      if (next) rows.set(id, next);
      return result;
    },
    wake: async (id, nowMs) => (open(), intents.wake(id, nowMs)),
    async remove(id, final, nowMs) {
      open();
      if (!rows.delete(id)) return undefined;
      return intents.cancelPending(id, final, nowMs);
    },
  };
}
