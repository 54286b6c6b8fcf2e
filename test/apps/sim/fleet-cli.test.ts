import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runOncely } from '../../support/run-cli.js';
import type { FleetSummary } from '#cli/sim/index.js';

// In-process: the program the binary runs, with its output captured; its worker processes are real.
const oncely = (...args: string[]) => runOncely(args);

test('oncely sim fleet overload --check prints each claim reproduced, the table, and exits 0', async () => {
  const result = await oncely(
    'sim',
    'fleet',
    'overload',
    '--seeds',
    '1',
    '--workers',
    '2',
    '--check',
  );
  assert.equal(result.status, 0, result.stdout + result.stderr);
  assert.equal(result.stderr, '', 'no progress bar when stderr is not a terminal');
  assert.match(result.stdout, /5 cells x 1 seeds = 5 runs on 2 workers/);
  assert.match(result.stdout, /3 retries +never +1\/1/);
  assert.equal(result.stdout.match(/^ {2}reproduced {6}/gm)?.length, 4);
  assert.doesNotMatch(result.stdout, /NOT REPRODUCED/);
});

test('oncely sim fleet dependency --csv --out: one line per cell, summary.json with rows and claims', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'oncely-fleet-'));
  try {
    const result = await oncely(
      'sim',
      'fleet',
      'dependency',
      '--seeds',
      '1',
      '--workers',
      '1',
      '--csv',
      '--out',
      dir,
    );
    assert.equal(result.status, 0, result.stderr);
    const lines = result.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^model,strategy,x,clients,totalRatePerSecond,seeds,load,success,/);
    assert.equal(
      lines.length,
      1 + 5 * 10 * 4,
      'header, then 5 strategies x 10 failure rates x 4 fleets',
    );
    assert.deepEqual(readdirSync(dir).sort(), ['cells.csv', 'summary.json']);
    assert.equal(readFileSync(join(dir, 'cells.csv'), 'utf8'), result.stdout);
    const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as FleetSummary;
    assert.equal(summary.model, 'dependency');
    assert.equal(summary.rows.length, 200);
    assert.ok(summary.claims.some((c) => c.id === 'retries-closed-form'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('oncely sim fleet refuses a bad model or flag with one line and exit 2', async () => {
  for (const args of [['nope'], ['contention', '--seeds', '0'], ['overload', '--workers', 'two']]) {
    const result = await oncely('sim', 'fleet', ...args);
    assert.equal(result.status, 2, args.join(' '));
    assert.equal(result.stdout, '');
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
    assert.match(result.stderr, /^oncely: /);
  }
});
