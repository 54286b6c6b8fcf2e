// Every benchmark reads its command line through bench-args: --help prints its usage, an unknown
// option is one line and exit 2 before anything is set up, and under bench/run-all (which hands
// all of them the same arguments) an option a benchmark does not take is skipped.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { parseBenchArgs, SHARED_ARGS_ENV } from '../../bench/bench-args.js';
import { repoPath } from '../support/repo-path.js';

const OPTIONS = { rounds: { type: 'string' }, help: { type: 'boolean' } } as const;
const parse = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  parseBenchArgs('demo', 'usage: demo', { args, options: OPTIONS }, env);

describe('benchmark command lines', () => {
  it('read the options a benchmark takes', () => {
    const read = parse(['--rounds', '3']);
    assert.equal(read.kind, 'run');
    assert.equal(read.kind === 'run' && read.parsed.values.rounds, '3');
  });

  it('refuse an unknown option, a missing value or a stray argument in one line', () => {
    assert.deepEqual(parse(['--round', '3']), {
      kind: 'bad',
      line: "bench/demo: Unknown option '--round' (--help lists the options)",
    });
    assert.deepEqual(parse(['--rounds']), {
      kind: 'bad',
      line: "bench/demo: Option '--rounds <value>' argument missing (--help lists the options)",
    });
    assert.deepEqual(parse(['3']), {
      kind: 'bad',
      line: "bench/demo: Unexpected argument '3' (--help lists the options)",
    });
  });

  it('answer --help with the usage; under run-all an unknown option is skipped', () => {
    assert.deepEqual(parse(['--help']), { kind: 'help', text: 'usage: demo' });
    const shared = parse(['--seconds', '2', '--rounds', '3'], { [SHARED_ARGS_ENV]: '1' });
    assert.equal(shared.kind, 'run');
    assert.equal(shared.kind === 'run' && shared.parsed.values.rounds, '3');
  });

  it('as a process: exit 2 and one line on stderr, nothing on stdout (bench/profile-breakdown)', () => {
    expectRefused(
      ['profile-breakdown', '--cpu', '5'],
      "bench/profile-breakdown: Unknown option '--cpu' (--help lists the options)",
    );
  });

  it('as a process: a count that is not a whole number >= 1 is one line and exit 2, before any set-up (bench/lock-wait)', () => {
    expectRefused(
      ['lock-wait', '--rounds', '0'],
      'bench/lock-wait: --rounds must be a whole number >= 1, got 0 (--help lists the options)',
    );
  });

  it('as a process: an unknown --variants name is one line and exit 2, before the server starts (bench/middleware-cost)', () => {
    expectRefused(
      ['middleware-cost', '--variants', 'deferred,nope'],
      'bench/middleware-cost: --variants takes names from bare, deferred, claimed, replay; got nope (--help lists the options)',
    );
  });
});

/** Runs dist/bench/<bench>.js with `args`: it must exit 2 with `line` alone on stderr and print nothing else. */
function expectRefused([bench, ...args]: string[], line: string): void {
  const file = repoPath('dist', 'bench', `${bench}.js`);
  const result = spawnSync(process.execPath, [file, ...args], { encoding: 'utf8' });
  assert.equal(result.status, 2);
  assert.equal(result.stdout, '');
  assert.equal(result.stderr, `${line}\n`);
}
