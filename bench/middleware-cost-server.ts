/**
 * The server of bench/middleware-cost, in a child process of its own (so its CPU time is its
 * own): one node:http server with a bare route and oncely's routes through `oncely/node`, on a
 * store with no database behind it. Its deferred commit answers at once, its claims are the
 * memory store's: what is left is what the middleware and the ledger cost a request.
 * It answers the parent's 'cpu' with its process.cpuUsage() and stops on 'exit'.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createLedger, type LedgerStore } from 'oncely';
import { createMemoryStore } from 'oncely/stores/memory';
import { idempotencyOf, idempotentListener } from 'oncely/node';

/** The memory store, with a deferred commit that needs nothing (a database's round trip is not measured). */
function storeWithoutDatabase(): LedgerStore<unknown> {
  const memory = createMemoryStore() as LedgerStore<unknown>;
  return new Proxy(memory, {
    get: (target, name, receiver) =>
      name === 'capabilities'
        ? { deferredCommit: async () => true }
        : (Reflect.get(target, name, receiver) as unknown),
  });
}

const decoder = new TextDecoder();
const answer = (res: ServerResponse, amount: number): void =>
  void res
    .writeHead(201, { 'content-type': 'application/json' })
    .end(JSON.stringify({ recorded: amount }));

const options = { ledger: createLedger({ store: storeWithoutDatabase() }), scopeOf: () => 'bench' };
const deferred = idempotentListener({ ...options, writes: 'deferred' }, (req, res) => {
  const context = idempotencyOf(req)!;
  const { amount, note } = JSON.parse(decoder.decode(context.body)) as {
    amount: number;
    note: string;
  };
  context.sql.defer('INSERT INTO effects (amount, note) VALUES ($1, $2)', [amount, note]);
  answer(res, amount);
});
const claimed = idempotentListener(options, (req, res) => {
  const context = idempotencyOf(req)!;
  const { amount } = JSON.parse(decoder.decode(context.body)) as { amount: number };
  answer(res, amount);
});

/** No oncely: the body, its JSON, the answer. */
async function bare(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const { amount } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { amount: number };
  answer(res, amount);
}

const server = createServer((req, res) => {
  if (req.url === '/deferred') void deferred(req, res);
  else if (req.url === '/claimed') void claimed(req, res);
  else void bare(req, res);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.send!({ port: typeof address === 'object' && address ? address.port : 0 });
});
process.on('message', (message) => {
  if (message === 'cpu') process.send!({ cpu: process.cpuUsage() });
  if (message === 'exit') server.close(() => process.exit(0));
});
