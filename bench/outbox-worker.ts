/**
 * bench/outbox's worker process: one sender (bench/outbox-senders.ts) driven by the harness over
 * IPC, so that its CPU time (/proc/<pid>/stat) is the sender's alone. No-op senders count the
 * jobs they ran here (Arrivals), as the receiver counts deliveries.
 *
 * Run by the harness: fork('dist/bench/outbox-worker.js', ['<WorkerConfig as JSON>']).
 */
import { Arrivals } from './outbox-arrivals.js';
import {
  monotonicMs,
  type WorkerConfig,
  type WorkerReply,
  type WorkerRequest,
} from './outbox-protocol.js';
import { createSender } from './outbox-senders.js';

const send = (reply: WorkerReply): void => void process.send?.(reply);
const config = JSON.parse(process.argv[2] ?? '{}') as WorkerConfig;
const handled = new Arrivals(send);
const sender = await createSender(config, (key) => handled.arrived(key, monotonicMs()));

async function handle(message: WorkerRequest): Promise<void> {
  if (message.type === 'prepare') {
    await sender.prepare(message.set);
    send({ type: 'prepared' });
  } else if (message.type === 'go') {
    await sender.start(message.set);
    send({ type: 'started' });
  } else if (message.type === 'stop') {
    await sender.stop();
    send({ type: 'stopped' });
  } else if (message.type === 'exit') {
    await sender.stop();
    await sender.close();
    process.exit(0);
  } else if (message.type === 'expect') handled.expect(message.prefix, message.count);
  else handled.report(message.prefix);
}

// One message at a time, in order: a stop never overtakes the start before it.
let queue = Promise.resolve();
process.on('message', (message: WorkerRequest) => {
  queue = queue.then(() =>
    handle(message).catch((error: unknown) =>
      send({ type: 'failed', message: error instanceof Error ? error.message : String(error) }),
    ),
  );
});
// The harness went away (Ctrl-C, a crash): nothing is left running. Its connections die with it.
process.on('disconnect', () => process.exit(0));
send({ type: 'ready' });
