import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoPath } from '../../support/repo-path.js';
import { runOncely } from '../../support/run-cli.js';
import { METRIC_NAMES, RULES, WORLD_PARAM_NAMES, runWorld } from '#cli/sim/index.js';

// In-process: the program the binary runs, output captured.
const oncely = (...args: string[]) => runOncely(args);

test('oncely sim batch --check reproduces every claim and exits 0; piped output has no progress bar', async () => {
  const result = await oncely('sim', 'batch', '--check');
  assert.equal(result.status, 0, result.stderr);
  assert.equal(result.stderr, '', 'no progress bar when stderr is not a terminal');
  assert.doesNotMatch(result.stdout, /NOT REPRODUCED/);
  assert.equal(
    result.stdout.match(/^ {2}reproduced {6}/gm)?.length,
    12,
    'eleven claims and the closed form',
  );
  assert.match(result.stdout, /640 worlds, 7 rules, 4480 outcomes/);
  assert.match(result.stdout, /The published means \(docs\/origins\.md\) beside ours/);
});

test('oncely sim batch --out keeps every outcome as JSON lines and CSV', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'oncely-sim-'));
  try {
    const result = await oncely('sim', 'batch', '--seeds', '4', '--out', dir, '--json');
    assert.equal(result.status, 0, result.stderr);
    assert.deepEqual(readdirSync(dir).sort(), [
      'means.csv',
      'outcomes.csv',
      'outcomes.jsonl',
      'summary.json',
    ]);
    const lines = readFileSync(join(dir, 'outcomes.jsonl'), 'utf8').trimEnd().split('\n');
    assert.equal(lines.length, 10 * 4 * RULES.length);
    assert.deepEqual(Object.keys(JSON.parse(lines[0]!) as object), [
      'setting',
      'seed',
      'rule',
      ...METRIC_NAMES,
    ]);
    const csv = readFileSync(join(dir, 'outcomes.csv'), 'utf8').trimEnd().split('\n');
    assert.equal(csv.length, lines.length + 1);
    const summary = JSON.parse(result.stdout) as {
      worlds: number;
      claims: { reproduced: boolean }[];
    };
    assert.equal(summary.worlds, 40);
    assert.deepEqual(JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')), summary);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('oncely sim run --json prints every parameter and per-rule metrics in a stable shape', async () => {
  const result = await oncely(
    'sim',
    'run',
    '--seed',
    '11',
    '--credits',
    '24',
    '--retention',
    '8',
    '--json',
  );
  assert.equal(result.status, 0, result.stderr);
  const out = JSON.parse(result.stdout) as {
    params: Record<string, unknown>;
    outcomes: { rule: string; label: string; metrics: Record<string, number> }[];
  };
  assert.deepEqual(Object.keys(out), ['params', 'outcomes']);
  assert.deepEqual(Object.keys(out.params), WORLD_PARAM_NAMES);
  assert.equal(out.params['retentionTicks'], 8);
  assert.equal(out.params['forgetKeysAt'], null);
  assert.deepEqual(
    out.outcomes.map((o) => o.rule),
    RULES.map((r) => r.id),
  );
  for (const o of out.outcomes) {
    assert.deepEqual(Object.keys(o), ['rule', 'label', 'metrics']);
    assert.deepEqual(Object.keys(o.metrics), [...METRIC_NAMES]);
    assert.deepEqual(
      o.metrics,
      runWorld({ seed: 11, credits: 24, retentionTicks: 8 }, o.rule as never, { trace: false })
        .metrics,
    );
  }
});

test('oncely sim run --trace --json prints the golden trace; the human table is one row per rule', async () => {
  const result = await oncely(
    'sim',
    'run',
    '--seed',
    '7',
    '--rules',
    'retry-key',
    '--trace',
    '--json',
  );
  assert.equal(result.status, 0, result.stderr);
  const out = JSON.parse(result.stdout) as { outcomes: { trace: unknown[] }[] };
  const golden = JSON.parse(
    readFileSync(repoPath('test', 'apps', 'sim', 'golden', 'retry-key.json'), 'utf8'),
  ) as unknown[];
  assert.deepEqual(out.outcomes[0]?.trace, golden);

  const human = await oncely(
    'sim',
    'run',
    '--setting',
    'loss-free',
    '--rules',
    'send-once,retry-key',
  );
  assert.equal(human.status, 0, human.stderr);
  const lines = human.stdout.trimEnd().split('\n');
  assert.match(lines[0]!, /^seed 0, 18 jobs, horizon 72, .*request loss 0, receipt loss 0/);
  assert.match(lines.at(-2)!, /^Send once +18 +0 +18 +18 +18 +0$/);
  assert.match(lines.at(-1)!, /^Retry \+ key +18 +0 +18 /);
});

test('--policy, the older name of --rules, still selects the rules', async () => {
  const byRules = await oncely(
    'sim',
    'run',
    '--seed',
    '3',
    '--rules',
    'retry-oldest,oncely-key',
    '--json',
  );
  const byPolicy = await oncely(
    'sim',
    'run',
    '--seed',
    '3',
    '--policy',
    'retry-oldest,oncely-key',
    '--json',
  );
  assert.equal(byRules.status, 0, byRules.stderr);
  assert.equal(byPolicy.stdout, byRules.stdout);
  const rules = (JSON.parse(byRules.stdout) as { outcomes: { rule: string }[] }).outcomes;
  assert.deepEqual(
    rules.map((o) => o.rule),
    ['retry-oldest', 'oncely-key'],
  );
  const help = (await oncely('sim', 'run', '--help')).stdout;
  assert.match(help, /--policy <ids> +the older name of --rules/);
});

test('bad input: one line "oncely: …" naming the flag, exit 2', async () => {
  for (const [args, pattern] of [
    [
      ['--credits', 'lots'],
      /^oncely: invalid option --credits: got "lots", expected an integer from 0 to/,
    ],
    [
      ['--request-loss', '2'],
      /^oncely: invalid option --request-loss: got "2", expected a probability from 0 to 1/,
    ],
    [
      ['--retention', '0'],
      /^oncely: invalid option --retention: got "0", expected an integer from 1 .* or run for the whole run/,
    ],
    [
      ['--rules', 'retry-harder'],
      /^oncely: invalid option --rules: got "retry-harder", expected one of send-once/,
    ],
    [
      ['--policy', 'retry-harder'],
      /^oncely: invalid option --policy: got "retry-harder", expected one of send-once/,
    ],
    [
      ['--rules', 'retry-key', '--policy', 'send-once'],
      /^oncely: invalid option --policy: got "send-once", expected the same list as --rules \(retry-key\)/,
    ],
    [['--setting', 'stormy'], /^oncely: invalid option --setting: got "stormy"/],
  ] as const) {
    const result = await oncely('sim', 'run', ...args);
    assert.equal(result.status, 2, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stderr, pattern);
    assert.equal(result.stderr.trimEnd().split('\n').length, 1);
  }
  const batch = await oncely('sim', 'batch', '--seeds', '0');
  assert.equal(batch.status, 2);
  assert.match(batch.stderr, /^oncely: invalid option --seeds: got "0"/);
});

test('--help lists the subcommands and every world flag', async () => {
  const sim = await oncely('sim', '--help');
  assert.match(sim.stdout, /run \[options\]/);
  assert.match(sim.stdout, /batch \[options\]/);
  const run = await oncely('sim', 'run', '--help');
  for (const flag of [
    '--seed',
    '--rules',
    '--policy',
    '--credits',
    '--retention',
    '--forget-at',
    '--trace',
    '--json',
  ])
    assert.match(run.stdout, new RegExp(flag));
  assert.match((await oncely('sim', 'batch', '--help')).stdout, /--check/);
});
