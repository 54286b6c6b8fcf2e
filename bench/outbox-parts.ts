/**
 * The parts of an outbox worker's CPU profile (bench/outbox --cpu-prof-dir), for
 * bench/profile-breakdown --parts outbox. A sample is charged to the innermost frame that names
 * a part. What a frame cannot say: the PostgreSQL driver parses every answer from a socket read,
 * not under the call that sent the statement, so its time is one part for claim, startAttempts
 * and settle together; the SQL building and row mapping of each shows under its own name.
 */

/** A V8 profile's call frame (the two fields read). */
interface Frame {
  readonly functionName: string;
  readonly url: string;
}

export const OUTBOX_PARTS = [
  'claim (SQL, rows to intents)',
  'startAttempts',
  'settle (next step, SQL)',
  'PostgreSQL driver (every statement)',
  'SQLite statements',
  'HTTP: node:http request and response',
  "HTTP: oncely's Fetch adapter (Response, Headers, web streams)",
  'abort signals, timers',
  'signing',
  'attempt bookkeeping (client, policy, clock)',
  'outbox pass (batching, endpoints)',
  'JSON',
  'garbage collection',
  'module loading, start-up',
  'socket I/O nobody above owns',
  'other (promise plumbing)',
] as const;

const has = (frame: Frame, ...parts: string[]): boolean => parts.some((p) => frame.url.includes(p));

/** A frame of the journal's store: the operation it serves, by the method's name. */
function storeOperation(name: string): string | undefined {
  if (/claim/i.test(name)) return OUTBOX_PARTS[0];
  if (/startAttempt/i.test(name)) return OUTBOX_PARTS[1];
  if (/settle/i.test(name)) return OUTBOX_PARTS[2];
  return undefined; // a helper (row mapping, a query wrapper): charged to the method above it
}

function outboxPartOf(frame: Frame): string | undefined {
  const { functionName: name, url } = frame;
  if (has(frame, 'node:internal/modules', 'node:internal/bootstrap') || name === 'wrapSafe')
    return 'module loading, start-up';
  if (has(frame, '/node_modules/pg/', '/node_modules/pg-protocol/', '/node_modules/pg-types/'))
    return 'PostgreSQL driver (every statement)';
  if (has(frame, '/node_modules/pg-pool/')) return 'PostgreSQL driver (every statement)';
  if (has(frame, 'better-sqlite3', '/stores/sqlite/')) return 'SQLite statements';
  if (has(frame, '/stores/')) return storeOperation(name);
  if (url === '' && (name === 'parse' || name === 'stringify')) return 'JSON';
  if (has(frame, 'standard-webhooks', 'webhook-keys', 'secret-rotation', 'node-ed25519'))
    return 'signing';
  if (has(frame, 'internal/crypto')) return 'signing';
  if (has(frame, '/journal/next-step')) return 'settle (next step, SQL)';
  if (has(frame, '/client/node-http-fetch', 'node:internal/webstreams', 'internal/deps/undici'))
    return "HTTP: oncely's Fetch adapter (Response, Headers, web streams)";
  if (has(frame, 'node:_http', 'node:internal/http', '/journal/wire-send', '/journal/wire-attempt'))
    return 'HTTP: node:http request and response';
  if (has(frame, '/journal/deadline-sweep')) return 'abort signals, timers';
  if (has(frame, 'abort_controller', 'node:timers', 'internal/timers') || name === 'DOMException')
    return 'abort signals, timers';
  if (has(frame, '/client/', '/policy/', '/time/', '/journal/send-attempt'))
    return 'attempt bookkeeping (client, policy, clock)';
  if (has(frame, '/journal/')) return 'outbox pass (batching, endpoints)';
  return undefined;
}

export const OUTBOX_SCHEME = {
  parts: OUTBOX_PARTS,
  partOf: outboxPartOf,
  gc: 'garbage collection',
  socket: 'socket I/O nobody above owns',
  other: 'other (promise plumbing)',
} as const;
