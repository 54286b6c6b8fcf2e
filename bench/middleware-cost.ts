/**
 * What oncely's middleware and ledger cost a request, with no database at all: the same POST
 * through a bare node:http handler and through `oncely/node` on a store whose commit needs
 * nothing (bench/middleware-cost-server.ts), driven by autocannon, variants interleaved round by
 * round. Prints each variant's median req/s and the server process's CPU time per request (user +
 * system), and what each costs beyond the bare handler. bench/ledger measures the same routes
 * with their database; the difference between the two is the store's share.
 *
 *   npm run build && node dist/bench/middleware-cost.js [--seconds 3] [--rounds 3] [--connections 10]
 *                                                      [--variants bare,deferred] [--cpu-prof DIR]
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { autocannon, type AutocannonRequest } from './autocannon.js';
import { exitOnBadArgs, readBenchArgs, wholeArgOrExit } from './bench-args.js';

const VARIANTS = {
  bare: { path: '/bare', keys: 'none', what: 'no oncely: body, JSON, answer' },
  deferred: { path: '/deferred', keys: 'fresh', what: "a new key each, writes: 'deferred'" },
  claimed: { path: '/claimed', keys: 'fresh', what: 'a new key each, claimed (memory store)' },
  replay: { path: '/claimed', keys: 'one', what: 'one key for all: answered from the receipt' },
} as const;
type Variant = keyof typeof VARIANTS;

const USAGE = `usage: node dist/bench/middleware-cost.js [options]
  What oncely's middleware and ledger cost a request with no database: a bare node:http handler
  against oncely/node's routes on a store that commits at once; CPU per request of the server.
  --seconds N       length of each measured run (default 3)
  --rounds N        rounds, variants interleaved in each; the median kept (default 3)
  --connections N   autocannon connections (default 10)
  --variants A,B    only these (from ${Object.keys(VARIANTS).join(', ')}); bare always runs, as
                    every other row is read against it; to profile one route
  --cpu-prof DIR    profile the server process (node --cpu-prof) into DIR
  --help            this text`;

const { values } = readBenchArgs('middleware-cost', USAGE, {
  options: {
    seconds: { type: 'string' },
    rounds: { type: 'string' },
    connections: { type: 'string' },
    'cpu-prof': { type: 'string' },
    variants: { type: 'string' },
    help: { type: 'boolean' },
  },
});
const seconds = wholeArgOrExit('middleware-cost', 'seconds', values.seconds, 3);
const rounds = wholeArgOrExit('middleware-cost', 'rounds', values.rounds, 3);
const connections = wholeArgOrExit('middleware-cost', 'connections', values.connections, 10);

const variants = chosenVariants(values.variants);

const profileDir = values['cpu-prof'];
const server = fork(fileURLToPath(new URL('./middleware-cost-server.js', import.meta.url)), [], {
  execArgv: profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`],
});
const ask = <T>(message: string, field: string): Promise<T> =>
  new Promise((resolve) => {
    const onMessage = (reply: Record<string, unknown>): void => {
      if (!(field in reply)) return;
      server.off('message', onMessage);
      resolve(reply[field] as T);
    };
    server.on('message', onMessage);
    if (message !== '') server.send(message);
  });
const port = await ask<number>('', 'port');

let keyCount = 0;
interface Run {
  readonly reqPerS: number;
  readonly cpuUs: number;
}

async function measure(variant: Variant, runSeconds: number): Promise<Run> {
  const { path, keys } = VARIANTS[variant];
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...(keys === 'one' ? { 'idempotency-key': 'the-one-key' } : {}),
  };
  const request: AutocannonRequest = {
    method: 'POST',
    path,
    headers,
    body: '{"amount":5,"note":"bench"}',
    ...(keys === 'fresh'
      ? {
          setupRequest: (r: AutocannonRequest) => ({
            ...r,
            headers: { ...r.headers, 'idempotency-key': `k-${++keyCount}` },
          }),
        }
      : {}),
  };
  const before = await ask<NodeJS.CpuUsage>('cpu', 'cpu');
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    duration: runSeconds,
    requests: [request],
  });
  const after = await ask<NodeJS.CpuUsage>('cpu', 'cpu');
  const total = Math.max(1, result.requests.total);
  const cpu = after.user - before.user + (after.system - before.system);
  return { reqPerS: result.requests.total / runSeconds, cpuUs: cpu / total };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const spread = (xs: number[]): string =>
  `${Math.round(Math.min(...xs))}–${Math.round(Math.max(...xs))}`;

/** bare, then the variants --variants names (all by default), in the table's order. */
function chosenVariants(list: string | undefined): Variant[] {
  const all = Object.keys(VARIANTS) as Variant[];
  if (list === undefined) return all;
  const named = list.split(',').map((v) => v.trim());
  const unknown = named.filter((v) => !(all as string[]).includes(v));
  if (unknown.length > 0)
    exitOnBadArgs(
      'middleware-cost',
      `--variants takes names from ${all.join(', ')}; got ${unknown.join(', ')}`,
    );
  return all.filter((v) => v === 'bare' || named.includes(v));
}
console.log(
  `bench/middleware-cost: POST through oncely/node with no database; autocannon, ${connections} connections, ${seconds} s per run, ${rounds} round(s), variants interleaved; server in a child process`,
);
for (const variant of variants) await measure(variant, 1); // warm-up
const runs = new Map<Variant, Run[]>(variants.map((v) => [v, []]));
for (let round = 0; round < rounds; round++)
  for (const variant of variants) runs.get(variant)!.push(await measure(variant, seconds));

const cpuOf = (v: Variant): number => median(runs.get(v)!.map((r) => r.cpuUs));
console.log('\nvariant   req/s    spread          cpu µs/req  spread      beyond bare  what');
for (const variant of variants) {
  const rows = runs.get(variant)!;
  const reqs = rows.map((r) => r.reqPerS);
  const cpus = rows.map((r) => r.cpuUs);
  const beyond = variant === 'bare' ? '–' : `+${(cpuOf(variant) - cpuOf('bare')).toFixed(0)} µs`;
  console.log(
    [
      variant.padEnd(8),
      String(Math.round(median(reqs))).padStart(6),
      spread(reqs).padEnd(14),
      cpuOf(variant).toFixed(0).padStart(11),
      spread(cpus).padEnd(10),
      beyond.padStart(12),
      VARIANTS[variant].what,
    ].join('  '),
  );
}
console.log(
  'cpu µs/req: the server process, user + system, per request; read it beside bench/ledger, whose rows add the database.',
);
server.send('exit');
