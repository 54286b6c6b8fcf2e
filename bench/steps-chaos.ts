/**
 * bench/steps-chaos: steps (docs/steps.md) under SIGKILLs and a failing payment service. Not part of
 * `npm test` (its short version is test/bench/steps-chaos.test.ts). The usage is the documentation.
 */
import { exitOnBadArgs, readBenchArgs, wholeArgOrExit } from './bench-args.js';
import { formatStepsChaos, passed } from './steps-chaos-report.js';
import { runStepsChaos } from './steps-chaos-run.js';

const NAME = 'steps-chaos';
const USAGE = `Usage: node dist/bench/steps-chaos.js [options]

Checkouts of three steps (a charge at a payment mock under the step's derived key, an order row,
an outbox email intent through journal.recordWithin), each a recovery point, behind oncely's
ledger on two servers (child processes) sharing one PostgreSQL schema of the run's own.
oncely's client sends each checkout under its Idempotency-Key, with jitter, each attempt to
either server.

Faults: each server SIGKILLs itself at planned step boundaries: inside a step before its
recovery point commits (before-commit), after it (after-commit), and after the last step before
the receipt (before-receipt); it is restarted at once. The payment mock answers 503 or holds
its answer past the server's 300 ms timeout at random, before or after charging.

Pass: every checkout answered 201, with exactly one charge (under one derived key), one order
row and one email intent; a replay of every checkout gets the same body, which names the charge;
every planned kill happened and no server died otherwise. Prints counts and PASS or FAIL
(exit 1); progress goes to stderr.

Options:
  --requests N      checkouts (default 10000)
  --each K          SIGKILLs of each kind (default 20)
  --concurrency C   checkouts in flight (default 32)
  --seed S          seeds the plan, the jitter and the payment faults (default 1)
  --error-rate R    the payment mock's 503 rate (default 0.03)
  --timeout-rate R  the payment mock's timeout rate (default 0.02)
  --pg URL          PostgreSQL (default $ONCELY_TEST_POSTGRES_URL)
  --broken          the servers charge outside a step, under a new key per run (as before
                    steps): the check must then fail
  --help            this text`;

const values = readBenchArgs(NAME, USAGE, {
  options: {
    requests: { type: 'string' },
    each: { type: 'string' },
    concurrency: { type: 'string' },
    seed: { type: 'string' },
    'error-rate': { type: 'string' },
    'timeout-rate': { type: 'string' },
    pg: { type: 'string' },
    broken: { type: 'boolean' },
    help: { type: 'boolean' },
  },
}).values;
const options = {
  requests: wholeArgOrExit(NAME, 'requests', values.requests, 10_000),
  each: wholeArgOrExit(NAME, 'each', values.each, 20),
  concurrency: wholeArgOrExit(NAME, 'concurrency', values.concurrency, 32),
  seed: wholeArgOrExit(NAME, 'seed', values.seed, 1, 0),
  payment: {
    error: rate('error-rate', values['error-rate'], 0.03),
    timeout: rate('timeout-rate', values['timeout-rate'], 0.02),
  },
};
const pgUrl = values.pg ?? process.env['ONCELY_TEST_POSTGRES_URL'];
if (!pgUrl) exitOnBadArgs(NAME, 'no PostgreSQL: pass --pg URL or set ONCELY_TEST_POSTGRES_URL');
const result = await runStepsChaos({
  ...options,
  pgUrl,
  broken: values.broken === true,
  onProgress: (line) => console.error(line),
});
console.log(formatStepsChaos(result));
if (!passed(result) && result.stderrTail.length > 0)
  console.log(["last lines on the servers' stderr:", ...result.stderrTail].join('\n'));
process.exitCode = passed(result) ? 0 : 1;

function rate(option: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!(n >= 0 && n < 0.5))
    exitOnBadArgs(NAME, `--${option} must be a rate in [0, 0.5), got ${raw}`);
  return n;
}
