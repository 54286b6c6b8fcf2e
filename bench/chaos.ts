/**
 * bench/chaos: exactly once, end to end, under faults. Not part of `npm test` (its short version
 * is test/bench/chaos.test.ts). The usage below is the documentation.
 */
import { readBenchArgs, exitOnBadArgs, wholeArgOrExit } from './bench-args.js';
import { postgresBinDir } from './chaos-cluster.js';
import { FAULT_KINDS, type FaultKind } from './chaos-faults.js';
import { formatChaosReport } from './chaos-report.js';
import { runChaos } from './chaos-run.js';

const NAME = 'bench/chaos';
const USAGE = `Usage: node dist/bench/chaos.js [options]

Proves oncely's promise across both ends of the wire, under faults, with real processes: two
outbox workers deliver intents from a PostgreSQL journal to two receivers on one PostgreSQL
ledger (behind a round-robin TCP proxy) and to one receiver on SQLite; the effect is a row
written in the ledger's transaction. PostgreSQL is a throw-away cluster of the harness's own
(initdb + pg_ctl in a temp dir, as the postgres user when run as root), never the machine's.

Faults, one after another on a seeded plan spread over the intents:
  worker-kill     SIGKILL of an outbox worker (restarted, as a supervisor would)
  receiver-kill   SIGKILL of a receiver (restarted)
  receiver-term   SIGTERM of a receiver: it drains, exits and is restarted
  pg-stop         pg_ctl stop -m immediate for --pg-down-ms, then started again; meanwhile
                  /healthz and keyed requests must answer 503 + Retry-After within 3 s, and
                  after it each receiver serves a keyed request within 2 s, unrestarted
  proxy-swallow   the proxy drops 30% of answers after the request was forwarded
  proxy-reset     the proxy resets 30% of connections before forwarding
  proxy-delay     the proxy delays every chunk by 100-800 ms
  disk-full       the SQLite receiver's RLIMIT_FSIZE set to 0 (prlimit) for a while;
                  keyed requests must answer 503 + Retry-After

Checked at the end from the databases: every intent the journal acknowledged is delivered;
each key has exactly one effect row; no receipt without its effect, no effect without its
receipt. Prints a table per fault (injected, survived, intents, effects, duplicates, lost,
time to recover p50/p99) and a summary line; progress goes to stderr. Exit 1 on any failure.

Options:
  --intents N        intents to record (default 5000)
  --seed S           seeds the fault plan, the choices and the proxy (default 1)
  --faults LIST      comma-separated kinds above, or "all" (default all)
  --each K           times each kind is injected (default max(1, ceil(N / 50000)): 20 at 1M)
  --minutes M        record no intent and inject no fault after M minutes, then drain and check
  --pg-down-ms A-B   how long PostgreSQL stays down (default 2000-10000)
  --window-ms A-B    how long a proxy fault or a full disk lasts (default 1000-3000)
  --broken           the receiver writes its effect outside the ledger's transaction (on a
                     connection of its own): the check must then fail
  --help             this text

Needs PostgreSQL's server binaries (pg_config --bindir, or /usr/lib/postgresql/N/bin) and
prlimit (util-linux).`;

const args = readBenchArgs(NAME, USAGE, {
  options: {
    intents: { type: 'string' },
    seed: { type: 'string' },
    faults: { type: 'string' },
    each: { type: 'string' },
    minutes: { type: 'string' },
    'pg-down-ms': { type: 'string' },
    'window-ms': { type: 'string' },
    broken: { type: 'boolean' },
    help: { type: 'boolean' },
  },
});
const { values } = args;
const intents = wholeArgOrExit(NAME, 'intents', values.intents, 5000);
const seed = wholeArgOrExit(NAME, 'seed', values.seed, 1, 0);
const each = wholeArgOrExit(NAME, 'each', values.each, Math.max(1, Math.ceil(intents / 50_000)));
const minutes = values.minutes === undefined ? undefined : Number(values.minutes);
if (minutes !== undefined && !(minutes > 0))
  exitOnBadArgs(NAME, `--minutes must be > 0, got ${values.minutes}`);
const faults = faultList(values.faults ?? 'all');
const binDir = postgresBinDir();
if (binDir === undefined) exitOnBadArgs(NAME, 'no PostgreSQL server binaries (initdb) found');

const result = await runChaos({
  intents,
  seed,
  faults,
  each,
  minutes,
  timing: {
    pgDownMs: rangeArg('pg-down-ms', values['pg-down-ms'], [2000, 10_000]),
    windowMs: rangeArg('window-ms', values['window-ms'], [1000, 3000]),
  },
  effectOutsideTransaction: values.broken === true,
  binDir,
  onProgress: (line) => console.error(line),
});
console.log(formatChaosReport(result));
if (result.failures.length > 0 && result.childStderr.length > 0)
  console.log(['', "last lines on the children's stderr:", ...result.childStderr].join('\n'));
const slow = result.faults.flatMap((fault) => (fault.slow === undefined ? [] : [fault.slow]));
process.exitCode = result.failures.length === 0 && slow.length === 0 ? 0 : 1;

function faultList(raw: string): FaultKind[] {
  if (raw === 'all') return [...FAULT_KINDS];
  const kinds = raw.split(',').map((kind) => kind.trim());
  for (const kind of kinds)
    if (!(FAULT_KINDS as readonly string[]).includes(kind))
      exitOnBadArgs(
        NAME,
        `--faults: unknown kind ${JSON.stringify(kind)} (known: ${FAULT_KINDS.join(', ')}, all)`,
      );
  return kinds as FaultKind[];
}

function rangeArg(
  option: string,
  raw: string | undefined,
  fallback: [number, number],
): [number, number] {
  if (raw === undefined) return fallback;
  const match = /^(\d+)-(\d+)$/.exec(raw);
  const range = match ? [Number(match[1]), Number(match[2])] : [];
  if (range.length !== 2 || range[0]! > range[1]!)
    exitOnBadArgs(NAME, `--${option} must be MIN-MAX in ms (MIN <= MAX), got ${raw}`);
  return range as [number, number];
}
