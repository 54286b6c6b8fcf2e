/**
 * bench/outbox's receiver, in a process of its own so its CPU is never charged to a sender: a
 * keep-alive node:http server that answers 200 at once and notes, per Idempotency-Key, when the
 * first request for it arrived and how many came (Arrivals). Times are CLOCK_MONOTONIC, which
 * every process on the machine shares, so an arrival here and a commit in the harness subtract.
 *
 * Run by the harness: fork('dist/bench/outbox-receiver.js').
 */
import { createServer } from 'node:http';
import { Arrivals } from './outbox-arrivals.js';
import { monotonicMs, type ReceiverReply, type ReceiverRequest } from './outbox-protocol.js';

const send = (reply: ReceiverReply): void => void process.send?.(reply);
const arrivals = new Arrivals(send);

/** The outbox sends the key as an RFC 9651 String (`"k"`); the job queues' fetch sends it bare. */
function keyOf(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return undefined;
  return value.startsWith('"') ? value.slice(1, -1) : value;
}

const server = createServer((req, res) => {
  const atMs = monotonicMs();
  const key = keyOf(req.headers['idempotency-key']);
  req.resume();
  req.on('end', () => {
    if (key !== undefined) arrivals.arrived(key, atMs);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '11' });
    res.end('{"ok":true}');
  });
});
// Longer than any pause between phases: the senders keep their connections alive.
server.keepAliveTimeout = 60_000;

process.on('message', (message: ReceiverRequest) => {
  if (message.type === 'expect') arrivals.expect(message.prefix, message.count);
  else arrivals.report(message.prefix);
});
// The harness went away (Ctrl-C, a crash): nothing is left running.
process.on('disconnect', () => process.exit(0));

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  send({ type: 'listening', url: `http://127.0.0.1:${port}/hooks` });
});
