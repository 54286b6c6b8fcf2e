// bench/chaos's short run: exactly once across the journal, the wire and the ledger, with every
// fault kind injected once, on real processes and a throw-away PostgreSQL of its own. It fails on
// a single duplicate, a single lost intent, a receipt without its effect or the reverse, a 5xx
// other than 503, or a probe answered otherwise than 503 + Retry-After during an outage. The one
// timed criterion (recovery within 2 s of PostgreSQL's return) is reported here, not asserted:
// the suite makes no timed assertions; `node dist/bench/chaos.js` fails on it.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { postgresBinDir } from '../../bench/chaos-cluster.js';
import { FAULT_KINDS } from '../../bench/chaos-faults.js';
import { formatChaosReport } from '../../bench/chaos-report.js';
import { runChaos } from '../../bench/chaos-run.js';
import { repoPath } from '../support/repo-path.js';

const INTENTS = 2000;

/** Why the run cannot happen on this machine, if it cannot. */
function missingTool(): string | undefined {
  if (process.platform !== 'linux') return 'the fault injection needs Linux (/proc, prlimit)';
  if (postgresBinDir() === undefined) return 'no PostgreSQL server binaries (initdb) found';
  if (spawnSync('prlimit', ['--version']).status !== 0) return 'prlimit (util-linux) is missing';
  return undefined;
}

const skip = missingTool();
it(
  `${INTENTS} intents under every fault kind: each delivered, each effect exactly once`,
  skip === undefined ? {} : { skip },
  async () => {
    const result = await runChaos({
      intents: INTENTS,
      seed: 1,
      faults: FAULT_KINDS,
      each: 1,
      minutes: undefined,
      // The floor of the long run's 2-10 s outage, and short windows: the suite's time is short.
      timing: { pgDownMs: [2000, 2000], windowMs: [500, 800] },
      effectOutsideTransaction: process.env['ONCELY_CHAOS_BROKEN'] === '1',
      binDir: postgresBinDir()!,
    });
    const report = formatChaosReport(result);
    console.log(report);
    assert.equal(result.intents, INTENTS, 'every intent was acknowledged by the journal');
    for (const kind of FAULT_KINDS)
      assert.ok(
        result.faults.some((fault) => fault.kind === kind),
        `${kind} was injected`,
      );
    assert.equal(result.verdict.duplicates, 0, 'no key has a second effect');
    assert.equal(
      result.verdict.lost,
      0,
      'every acknowledged intent was delivered, with its effect',
    );
    assert.equal(result.verdict.effects >= INTENTS, true);
    assert.deepEqual(result.failures, [], report);
  },
);

const bench = repoPath('dist', 'bench', 'chaos.js');
const cli = (...args: string[]) =>
  spawnSync(process.execPath, [bench, ...args], { encoding: 'utf8', timeout: 20_000 });

it('--help names every fault kind and option, and exits 0', () => {
  const result = cli('--help');
  assert.equal(result.status, 0, result.stderr);
  for (const word of [...FAULT_KINDS, '--intents', '--seed', '--faults', '--minutes', '--broken'])
    assert.match(result.stdout, new RegExp(word));
});

it('refuses an unknown fault kind or a bad range in one line, exit 2, before starting anything', () => {
  for (const args of [
    ['--faults', 'disk-full,meteor'],
    ['--pg-down-ms', '9000-2000'],
  ]) {
    const result = cli(...args);
    assert.equal(result.status, 2, result.stderr);
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
    assert.match(result.stderr, /bench\/chaos/);
  }
});
