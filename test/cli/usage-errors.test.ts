import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { EXIT } from '../../src/cli/exit.js';
import { CLI } from '../support/repo-path.js';

const oncely = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 20_000 });

test('commander\'s own refusals are one line, "oncely: …", exit 2, and nothing starts', () => {
  for (const [args, pattern] of [
    [['serve', '--fault', 'nope'], /^oncely: option '--fault <fault>' argument 'nope' is invalid\. Allowed choices are swallow-first-ack\./],
    [['serve', '--prot', '0'], /^oncely: unknown option '--prot' \(Did you mean --port\?\)/],
    [['sim', 'run', '--bogus'], /^oncely: unknown option '--bogus'/],
    [['deliver', 'http://127.0.0.1:1/h'], /^oncely: required option '-d, --data <json>' not specified/],
    [['deliver', '--data', '{}'], /^oncely: missing required argument 'url'/],
    [['serve', 'extra'], /^oncely: too many arguments for 'serve'/],
    [['bogus'], /^oncely: unknown command 'bogus'/],
  ] as const) {
    const result = oncely(...args);
    const shown = `oncely ${args.join(' ')}: ${result.stderr}`;
    assert.equal(result.status, EXIT.usage, shown);
    assert.match(result.stderr, pattern, shown);
    assert.equal(result.stderr.trimEnd().split('\n').length, 1, shown);
    assert.match(result.stderr, /\(run with --help for usage\)\n$/, shown);
    assert.equal(result.stdout, '', shown);
  }
});

test('--help and the help command still print the help on stdout and exit 0', () => {
  for (const args of [['--help'], ['serve', '--help'], ['help', 'sim']]) {
    const result = oncely(...args);
    assert.equal(result.status, EXIT.ok, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stdout, /^Usage: oncely/);
    assert.equal(result.stderr, '');
  }
});

test('--version prints the package version and exits 0', () => {
  const result = oncely('--version');
  assert.equal(result.status, 0);
  assert.match(result.stdout.trim(), /^\d+\.\d+\.\d+/);
});
