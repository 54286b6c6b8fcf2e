/**
 * Where a server thread's time went, from a V8 CPU profile (`node --cpu-prof`): each sample is
 * charged to the innermost frame that names a part of a request (body read, JSON parse,
 * fingerprint, hashing, store calls, response building...), so a web stream made inside a
 * Response constructor counts as response building, and one read by `request.text()` as body
 * read. Prints each part's share of the busy time and, given the server's CPU per request that
 * bench/ledger printed, that share of it in µs.
 *
 *   node --cpu-prof --cpu-prof-dir=prof dist/bench/ledger.js --only sqlite --variants keyed --seconds 8
 *   node dist/bench/profile-breakdown.js prof/CPU.*.1.*.cpuprofile [--cpu-us 766]
 *
 * The server runs in the bench's first worker thread: the file whose name has thread id 1.
 * `--parts outbox` charges an outbox worker's profile instead (bench/outbox --cpu-prof-dir): to
 * claim, startAttempts, settle, the database driver, the HTTP client, signing... (outbox-parts.ts).
 * Sampling is wall-clock: on a loaded machine a thread that waits for a core is charged to what
 * it was running, so read shares, and µs as shares of the CPU time /proc measured.
 */
import { readFileSync } from 'node:fs';
import { exitOnBadArgs, readBenchArgs } from './bench-args.js';
import { OUTBOX_SCHEME } from './outbox-parts.js';

export interface CallFrame {
  readonly functionName: string;
  readonly url: string;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: number[];
}
interface CpuProfile {
  readonly nodes: ProfileNode[];
  readonly samples: number[];
  readonly timeDeltas: number[];
}

const PARTS = [
  'HTTP parse + socket I/O (node:http)',
  'request building (Request, Headers)',
  'body read',
  'JSON parse',
  'fingerprint (canonical JSON)',
  'hashing (SHA-256)',
  'middleware + adapter',
  'ledger (claim, heartbeat, receipt)',
  'store calls: SQLite statements',
  'store calls: PostgreSQL driver',
  'response building',
  'abort signals',
  'bench handler (effect)',
  'garbage collection',
  'socket I/O nobody above owns (reads)',
  'other (promise plumbing, start-up)',
] as const;
type Part = string;

export const has = (frame: CallFrame, ...parts: string[]): boolean =>
  parts.some((p) => frame.url.includes(p));
export const named = (frame: CallFrame, ...names: string[]): boolean =>
  names.includes(frame.functionName);

/**
 * Which parts a profile is charged to: `partOf` names a frame's part, or undefined when the frame
 * is plumbing of its caller's. `gc`, `socket` and `other` are among `parts`.
 */
export interface BreakdownScheme {
  readonly parts: readonly string[];
  readonly partOf: (frame: CallFrame) => string | undefined;
  readonly gc: string;
  /** Socket and stream frames nobody above owns (reads). */
  readonly socket: string;
  readonly other: string;
}

/** The part a frame names, or undefined when it is plumbing (streams, promises) of its caller's. */
function partOf(frame: CallFrame): Part | undefined {
  if (has(frame, 'internal/crypto/hash')) return 'hashing (SHA-256)';
  if (frame.url === '' && named(frame, 'parse')) return 'JSON parse';
  if (
    has(
      frame,
      'better-sqlite3',
      '/src/stores/sqlite',
      '/stores/ledger/sqlite/',
      '/stores/journal/sqlite/',
    )
  )
    return 'store calls: SQLite statements';
  if (
    has(
      frame,
      '/node_modules/pg',
      '/src/stores/postgres',
      '/stores/ledger/postgres/',
      '/stores/journal/postgres/',
    )
  )
    return 'store calls: PostgreSQL driver';
  if (has(frame, '/src/stores/', '/src/ledger/')) return 'ledger (claim, heartbeat, receipt)';
  if (named(frame, 'requestFingerprint', 'canonicalJson', 'canonicalize'))
    return 'fingerprint (canonical JSON)';
  if (
    named(
      frame,
      'readBodyWithin',
      'readSmallBody',
      'consumeBody',
      'fullyReadBody',
      'answerToReceipt',
    ) ||
    (has(frame, 'undici') && named(frame, 'text', 'arrayBuffer', 'bytes', 'blob'))
  )
    return 'body read';
  if (
    named(
      frame,
      'toRequest',
      'requestOfBytes',
      'requestWithBody',
      '_Request',
      'Headers',
      '_Headers',
    )
  )
    return 'request building (Request, Headers)';
  if (
    named(
      frame,
      'firstResponse',
      'receiptToResponse',
      'responseOfBytes',
      'problemResponse',
      '_Response',
      'writeResponse',
    ) ||
    (has(frame, 'undici') && named(frame, 'json'))
  )
    return 'response building';
  if (has(frame, 'node:_http', 'node:internal/http')) return 'HTTP parse + socket I/O (node:http)';
  if (has(frame, 'abort_controller')) return 'abort signals';
  if (has(frame, '/src/http/')) return 'middleware + adapter';
  if (has(frame, '/bench/')) return 'bench handler (effect)';
  return undefined;
}

export interface Breakdown {
  readonly busyMs: number;
  readonly idleMs: number;
  readonly parts: ReadonlyMap<Part, number>;
}

export const LEDGER_SCHEME: BreakdownScheme = {
  parts: PARTS,
  partOf,
  gc: 'garbage collection',
  socket: 'socket I/O nobody above owns (reads)',
  other: 'other (promise plumbing, start-up)',
};

export function breakdown(profile: CpuProfile, scheme: BreakdownScheme = LEDGER_SCHEME): Breakdown {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id);
  const charged = new Map<number, Part | 'idle'>();
  const chargeOf = (id: number): Part | 'idle' => {
    const cached = charged.get(id);
    if (cached !== undefined) return cached;
    const leaf = byId.get(id)!.callFrame.functionName;
    let part: Part | 'idle' | undefined =
      leaf === '(idle)' ? 'idle' : leaf === '(garbage collector)' ? scheme.gc : undefined;
    // Socket and stream frames are plumbing: a write is charged to whoever wrote (pg, node:http).
    let socket = false;
    for (
      let at: number | undefined = id;
      part === undefined && at !== undefined;
      at = parent.get(at)
    ) {
      const frame = byId.get(at)!.callFrame;
      socket ||= has(frame, 'node:net', 'stream_base_commons', 'node:internal/streams/');
      // The URL parser's native step is also called `parse`: charge it to whoever made the URL.
      const parentFrame = byId.get(parent.get(at) ?? -1)?.callFrame;
      if (frame.url === '' && named(frame, 'parse') && parentFrame?.url === 'node:internal/url')
        continue;
      part = scheme.partOf(frame);
    }
    part ??= socket ? scheme.socket : scheme.other;
    charged.set(id, part);
    return part;
  };
  const parts = new Map<Part, number>(scheme.parts.map((p) => [p, 0]));
  let idleUs = 0;
  let busyUs = 0;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    const part = chargeOf(id);
    if (part === 'idle') idleUs += us;
    else {
      busyUs += us;
      parts.set(part, parts.get(part)! + us);
    }
  });
  return {
    busyMs: busyUs / 1000,
    idleMs: idleUs / 1000,
    parts: new Map([...parts].map(([p, us]) => [p, us / 1000])),
  };
}

/** The breakdown as a Markdown table; `cpuUs`: the server's CPU per request, shared out. */
export function formatBreakdown(b: Breakdown, cpuUs?: number): string {
  const lines = [
    `busy ${b.busyMs.toFixed(0)} ms, idle ${b.idleMs.toFixed(0)} ms`,
    `| part | share of busy time |${cpuUs ? ' µs per request |' : ''}`,
    `|---|---|${cpuUs ? '---|' : ''}`,
  ];
  for (const [part, ms] of [...b.parts].sort((x, y) => y[1] - x[1])) {
    if (ms === 0) continue;
    const share = ms / b.busyMs;
    const us = cpuUs ? ` ${(share * cpuUs).toFixed(0)} |` : '';
    lines.push(`| ${part} | ${(100 * share).toFixed(1)} % |${us}`);
  }
  return `${lines.join('\n')}\n`;
}

const isMain = process.argv[1]?.endsWith('profile-breakdown.js') === true;
if (isMain) {
  const usage = `usage: node dist/bench/profile-breakdown.js <file.cpuprofile> [--cpu-us N] [--parts ledger|outbox]
  where a server thread's time went, by part of a request, from a V8 CPU profile (node --cpu-prof)
  --cpu-us N       the CPU per request (delivery) that the bench printed: each share also in µs
  --parts outbox   an outbox worker's profile (bench/outbox --cpu-prof-dir): claim, settle, HTTP…
  --help           this text`;
  const { values, positionals } = readBenchArgs('profile-breakdown', usage, {
    allowPositionals: true,
    options: {
      'cpu-us': { type: 'string' },
      parts: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  const schemes: Record<string, BreakdownScheme> = { ledger: LEDGER_SCHEME, outbox: OUTBOX_SCHEME };
  const scheme = schemes[values.parts ?? 'ledger'];
  if (scheme === undefined)
    exitOnBadArgs('profile-breakdown', `--parts takes ledger or outbox, got ${values.parts}`);
  const file = positionals[0];
  if (file === undefined || positionals.length > 1)
    exitOnBadArgs('profile-breakdown', 'give one .cpuprofile file');
  const raw = values['cpu-us'];
  const cpuUs = raw === undefined ? undefined : Number(raw);
  if (cpuUs !== undefined && !(Number.isFinite(cpuUs) && cpuUs > 0))
    exitOnBadArgs('profile-breakdown', `--cpu-us must be a number > 0, got ${String(raw)}`);
  let profile: CpuProfile;
  try {
    profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  } catch (error) {
    exitOnBadArgs('profile-breakdown', `cannot read ${file}: ${(error as Error).message}`);
  }
  process.stdout.write(formatBreakdown(breakdown(profile, scheme), cpuUs));
}
