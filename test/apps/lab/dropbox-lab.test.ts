import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { repoPath } from '../../support/repo-path.js';
import { runOncely } from '../../support/run-cli.js';
import { runDropboxFixtures, CLOSES_AT } from '#cli/lab/dropbox/dropbox-fixtures.js';
import { InMemoryDropbox, ClosedError } from '#cli/lab/dropbox/in-memory-dropbox.js';
import { pythonRepr } from '#cli/lab/dropbox/python-repr.js';
import { dropboxPrintout } from '#cli/lab/dropbox/dropbox-printout.js';

// The dropbox story's (docs/origins.md) "Expected output", copied verbatim from the seed into the fixture file.
const expectedAtoC = readFileSync(
  repoPath('test', 'apps', 'lab', 'dropbox-expected-a-c.txt'),
  'utf8',
)
  .trimEnd()
  .split('\n');

test('oncely lab dropbox prints fixtures A-C exactly as the dropbox story expects', async () => {
  const out = (await runOncely(['lab', 'dropbox'])).stdout;
  const lines = out.trimEnd().split('\n');
  assert.deepEqual(lines.slice(0, expectedAtoC.length), expectedAtoC);
});

test('fixture D stops at the deadline with one row and a lookup that shows the accepted submission', async () => {
  const { D } = await runDropboxFixtures();
  assert.equal(D.report.stopReason, 'deadline_passed');
  assert.equal(D.report.outcome, 'unknown', 'a swallowed ack is unknown, never rejected');
  assert.equal(D.report.attemptCount, 1);
  assert.equal(D.report.attempts[0]?.startedAt, CLOSES_AT - 1_000);
  assert.equal(D.report.totalSleptMs, 0, 'no sleep is taken that would end past the deadline');
  assert.deepEqual(D.events, [
    'timeout:accepted, but the ack never came back',
    'stop:deadline_passed',
  ]);
  assert.equal(D.store.length, 1);
  assert.ok(D.lookupAt > CLOSES_AT, 'the lookup runs after the deadline');
  assert.equal(D.lookup?.status, 'accepted');
});

test('fixture B keeps one row however many times the ack is lost, and reports the attempt count', async () => {
  const { B } = await runDropboxFixtures();
  assert.equal(B.store.length, 1);
  assert.equal(B.report.attemptCount, 2);
  assert.equal(B.report.outcome, 'ok');
  assert.ok(B.report.attempts.every((a) => a.attempt >= 1));
});

test('--json prints the same facts', async () => {
  const out = (await runOncely(['lab', 'dropbox', '--json'])).stdout;
  const facts = JSON.parse(out) as {
    A: { store: unknown[] };
    B: { store: unknown[] };
    C: { caught: string };
    D: { report: { stopReason: string }; store: unknown[] };
  };
  assert.equal(facts.A.store.length, 2);
  assert.equal(facts.B.store.length, 1);
  assert.equal(facts.C.caught, 'empty idempotency key');
  assert.equal(facts.D.report.stopReason, 'deadline_passed');
  assert.equal(facts.D.store.length, 1);
});

test('the dropbox refuses new submissions after the close but still answers a replay', () => {
  let now = CLOSES_AT - 1;
  const box = new InMemoryDropbox({ swallowFirstAck: false, closesAt: CLOSES_AT, now: () => now });
  assert.equal(box.submit('k1', 'achen', 'lab3'), 'accepted');
  now = CLOSES_AT;
  assert.throws(() => box.submit('k2', 'achen', 'lab3'), ClosedError);
  assert.equal(box.submit('k1', 'achen', 'lab3'), 'accepted');
  assert.equal(box.dump().length, 1);
});

test('pythonRepr quotes like Python', () => {
  assert.equal(pythonRepr(["it's", 'a"b', 1, true, null]), `["it's", 'a"b', 1, True, None]`);
  assert.equal(pythonRepr({ k: ['x'] }), `{'k': ['x']}`);
});

test('a readable summary follows the byte-identical fixtures: sent, rows and writes per fixture', async () => {
  const lines = dropboxPrintout(await runDropboxFixtures());
  const summary = lines.slice(lines.indexOf('') + 1);
  assert.match(summary[0] ?? '', /^summary +sent +rows +writes +what it means$/);
  assert.match(summary[1] ?? '', /^ {2}A naive retry \(a new key\) +2 +2 +2 +one intent, two rows/);
  assert.match(summary[2] ?? '', /^ {2}B retry under the same key +2 +1 +1 +one intent, one row/);
  assert.match(summary[3] ?? '', /^ {2}C an empty key +0 +- +- +refused before anything was sent/);
  assert.match(summary[4] ?? '', /^ {2}D swallowed ack at the deadline +1 +1 +1 +outcome unknown/);
});
