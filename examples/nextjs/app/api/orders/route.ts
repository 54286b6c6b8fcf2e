import { createLedger } from 'oncely';
import { idempotencyOf, idempotentHandler } from 'oncely/fetch';
import { createMemoryStore, type MemoryTx } from 'oncely/stores/memory';

// One ledger per server process: the module is loaded once. Receipts in memory last as long as
// the process; oncely/stores/sqlite or oncely/stores/postgres keep them across restarts.
const ledger = createLedger({ store: createMemoryStore() });
let placed = 0;

// A retry with the same Idempotency-Key gets this answer again, with Idempotent-Replayed: true;
// the same key with another body is 422.
export const POST = idempotentHandler({ ledger }, async (request) => {
  const { item, qty } = (await request.json()) as { item: string; qty: number };
  const order = { id: `order-${++placed}`, item, qty };
  const context = idempotencyOf<MemoryTx>(request);
  context?.tx.set('orders', context.key, order); // commits with the receipt, or not at all
  return Response.json(order, { status: 201 });
});
