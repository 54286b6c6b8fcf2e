// bench/outbox's short run: every contender with a handful of intents, on real processes (a
// receiver, a worker per contender), checking that each intent of every set (drains, low load,
// saturation) reached the receiver exactly once, or, for no-op sends, ran in the worker exactly
// once. No timing is asserted: speed lives in bench/. PostgreSQL rows run when a server answers.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { runOutboxBench } from '../../bench/outbox.js';
import { CONTENDERS, onPostgres } from '../../bench/outbox-protocol.js';
import { failedChecks, formatChecks } from '../../bench/outbox-report.js';
import { OutboxRig } from '../../bench/outbox-run.js';
import { postgresTarget } from '../stores/postgres-env.js';
import { repoPath } from '../support/repo-path.js';

const INTENTS = 12;
const target = await postgresTarget();
if (target.kind === 'skip') console.log(`# bench/outbox: SQLite rows only: ${target.reason}`);

it(`${INTENTS} intents a drain through every contender: each delivered exactly once`, async () => {
  if (target.kind === 'fail') throw new Error(target.reason);
  const pgUrl = target.kind === 'ready' ? target.url : undefined;
  const contenders = CONTENDERS.filter((c) => pgUrl !== undefined || !onPostgres(c));
  const rig = new OutboxRig(pgUrl);
  try {
    const result = await runOutboxBench(
      {
        intents: INTENTS,
        rounds: 1,
        contenders,
        pgUrl,
        lowLoadSamples: 1,
        saturationSeconds: 1,
        batchSize: 5, // smaller than a drain: several claims and settlements each
        warmupIntents: 3,
        gapMaxMs: 20,
        progress: () => undefined,
      },
      rig,
    );
    assert.deepEqual(failedChecks(result.checks), [], formatChecks(result.checks));
    assert.deepEqual(
      result.drains.map((d) => d.contender).sort(),
      [...contenders].sort(),
      'one drain each',
    );
    for (const contender of contenders) {
      const sets = result.checks.filter((c) => c.contender === contender);
      // warm-up and drain; HTTP rows also one low-load intent and a saturation set; SQLite's
      // also its worker in the recording process: a warm-up and one low-load intent
      const embedded = contender === 'oncely-sqlite' ? 2 : 0;
      assert.equal(sets.length, (contender.endsWith('-noop') ? 2 : 4) + embedded, contender);
      assert.ok(sets.every((c) => c.expected > 0));
      const latency = result.latency.get(contender)!;
      if (contender.endsWith('-noop')) continue;
      assert.equal(latency.lowFromCommit.length, 1, `${contender}: one low-load intent`);
      // From the record's return can only be shorter than from its call.
      assert.ok(latency.lowFromCommit[0]! <= latency.low[0]!, contender);
    }
    const { embedded } = result;
    assert.equal(embedded.low.length, 1, 'one low-load intent, the worker in this process');
    assert.ok(embedded.lowFromCommit[0]! <= embedded.low[0]!);
  } finally {
    await rig.close();
  }
});

const bench = repoPath('dist', 'bench', 'outbox.js');
const cli = (...args: string[]) =>
  spawnSync(process.execPath, [bench, ...args], { encoding: 'utf8', timeout: 20_000 });

it('--help names every contender and option, and exits 0', () => {
  const result = cli('--help');
  assert.equal(result.status, 0, result.stderr);
  for (const word of [...CONTENDERS, '--intents', '--rounds', '--pg', '--hold-vacuum-minutes'])
    assert.match(result.stdout, new RegExp(word));
});

it('refuses an unknown contender in one line, exit 2, before starting anything', () => {
  const result = cli('--contenders', 'oncely-sqlite,bullmq');
  assert.equal(result.status, 2, result.stderr);
  assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
  assert.match(result.stderr, /bench\/outbox: --contenders: "bullmq" is unknown/);
});
