import { createJournal } from 'oncely';
import { openStore, type Place } from './endpoints-harness.js';

/** Polls the journal until `n` intents are delivered or `timeoutMs` passes; how many were. */
export async function waitDelivered(place: Place, n: number, timeoutMs: number): Promise<number> {
  const store = openStore(place);
  const journal = createJournal({ store });
  const until = Date.now() + timeoutMs;
  let delivered = 0;
  while (Date.now() < until) {
    delivered = (await journal.counts()).delivered;
    if (delivered >= n) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  await store.close();
  return delivered;
}
