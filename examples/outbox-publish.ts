import { createServer } from 'node:http';
import { createJournal, createOutboxWorker } from 'oncely';
import { createMemoryJournalStore } from 'oncely/stores/memory';

// Two receivers in one local server, by path; each prints the webhook-id it gets.
const receiver = createServer((req, res) => {
  console.log('received', req.url, req.headers['webhook-id']);
  req.resume().on('end', () => res.writeHead(204).end());
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;

const store = createMemoryJournalStore(); // oncely/stores/sqlite or /postgres to survive a crash
const journal = createJournal({ store });
await journal.endpoints.add({ id: 'shop', url: `${base}/shop`, eventTypes: ['order.*'] });
await journal.endpoints.add({ id: 'acme', url: `${base}/acme`, channels: ['tenant-acme'] });

// One message per event, for every endpoint subscribed to its type (and channel). Give it an id
// you can publish again: a publish cut short (a crash) is finished by publishing the same id.
const orderPlaced = { id: 'evt-o-1', type: 'order.created', data: { orderId: 'o-1' } };
const published = await journal.publish(orderPlaced);
console.log('published', published.id, 'to', published.endpoints.join(', '));
console.log('again:', (await journal.publish(orderPlaced)).created, 'new intent(s)');

const counts = await createOutboxWorker({ store }).resume();
console.log('delivered', counts.delivered);
receiver.close();
