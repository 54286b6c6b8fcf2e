import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { Command } from 'commander';
import { EXIT } from '#cli/cli/exit.js';
import { createProgram } from '#cli/cli/program.js';
import { CLI } from '../../support/repo-path.js';
import { runOncely } from '../../support/run-cli.js';

// In-process: the program the binary runs, with its output captured (no child process per case).
const oncely = (...args: string[]) => runOncely(args);

test('commander\'s own refusals are one line, "oncely: …", exit 2, and nothing starts', async () => {
  for (const [args, pattern] of [
    [
      ['serve', '--fault', 'nope'],
      /^oncely: option '--fault <fault>' argument 'nope' is invalid\. Allowed choices are swallow-first-ack\./,
    ],
    [['serve', '--prot', '0'], /^oncely: unknown option '--prot' \(Did you mean --port\?\)/],
    [['sim', 'run', '--bogus'], /^oncely: unknown option '--bogus'/],
    [['deliver', 'http://127.0.0.1:1/h'], /^oncely: deliver is missing --data <json>: /],
    [['deliver', '--data', '{}'], /^oncely: deliver is missing the <url> argument: /],
    [['deliver'], /^oncely: deliver is missing the <url> argument and --data <json>: /],
    [['serve', 'extra'], /^oncely: too many arguments for 'serve'/],
    [['bogus'], /^oncely: unknown command 'bogus'/],
  ] as const) {
    const result = await oncely(...args);
    const shown = `oncely ${args.join(' ')}: ${result.stderr}`;
    assert.equal(result.status, EXIT.usage, shown);
    assert.match(result.stderr, pattern, shown);
    assert.equal(result.stderr.trimEnd().split('\n').length, 1, shown);
    assert.match(result.stderr, /\(run with --help for usage\)\n$/, shown);
    assert.equal(result.stdout, '', shown);
  }
});

test('--help and the help command still print the help on stdout and exit 0', async () => {
  for (const args of [['--help'], ['serve', '--help'], ['help', 'sim']]) {
    const result = await oncely(...args);
    assert.equal(result.status, EXIT.ok, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stdout, /^Usage: oncely/);
    assert.equal(result.stderr, '');
  }
});

test("every command's --help writes its examples as `npx oncely …`, which works from a clone", async () => {
  const commands = (command: Command, path: string[]): string[][] =>
    command.commands.flatMap((sub) => [
      [...path, sub.name()],
      ...commands(sub, [...path, sub.name()]),
    ]);
  const all = commands(await createProgram(), []);
  assert.ok(all.length >= 15, `${all.length} commands`);
  const bare: string[] = [];
  for (const path of all) {
    const { stdout } = await oncely(...path, '--help');
    // An example is an indented command line; the Usage line and prose may say "oncely".
    for (const line of stdout.split('\n'))
      if (/^\s+(\$ )?oncely /.test(line)) bare.push(`${path.join(' ')}: ${line.trim()}`);
  }
  assert.deepEqual(bare, []);
});

test('--version prints the package version and exits 0', async () => {
  const result = await oncely('--version');
  assert.equal(result.status, 0);
  assert.match(result.stdout.trim(), /^\d+\.\d+\.\d+/);
});

test('the real binary: --version, and a refusal as one line with exit 2 (spawned)', () => {
  const version = spawnSync(process.execPath, [CLI, '--version'], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  assert.equal(version.status, 0, version.stderr);
  assert.match(version.stdout.trim(), /^\d+\.\d+\.\d+/);
  const refused = spawnSync(process.execPath, [CLI, 'bogus'], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  assert.equal(refused.status, EXIT.usage);
  assert.match(refused.stderr, /^oncely: unknown command 'bogus' \(run with --help for usage\)\n$/);
  assert.equal(refused.stdout, '');
});
