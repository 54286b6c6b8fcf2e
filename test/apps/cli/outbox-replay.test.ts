import { join } from 'node:path';
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createSqliteJournalStore, openSqliteDatabase } from '#oncely/stores/sqlite/index.js';
import { VirtualClock } from '#oncely/time/index.js';
import { seedDeadLetters } from '../../journal/dead-letter-seed.js';
import { runOncely } from '../../support/run-cli.js';
import { tempDir } from '../../support/temp-dir.js';

const dir = tempDir('oncely-outbox-replay-');
let n = 0;
let t = 0;
const iso = (ms: number) => new Date(ms).toISOString();

/** A fresh SQLite journal with one intent in each state (see seedDeadLetters). */
async function seededJournal(): Promise<string> {
  const file = join(dir, `journal-${++n}.db`);
  const store = createSqliteJournalStore({ database: () => openSqliteDatabase(file) });
  t = await seedDeadLetters(
    store,
    new VirtualClock({ startAt: Date.parse('2026-12-01T00:00:00Z') }),
  );
  await store.close();
  return file;
}

const stateOf = async (journal: string, key: string): Promise<string | undefined> => {
  const { stdout } = await runOncely(['outbox', 'list', '--json', '--journal', journal]);
  return (JSON.parse(stdout) as { key: string; state: string }[]).find((i) => i.key === key)?.state;
};

let shared = '';
before(async () => {
  shared = await seededJournal();
});

test('replay refuses bad input in one line, exit 2 with or without --dry-run, and changes nothing', async () => {
  const journal = shared;
  const listing = async () =>
    (await runOncely(['outbox', 'list', '--json', '--journal', journal])).stdout;
  const before = await listing();
  const cases: [string[], number, RegExp][] = [
    [[], 2, /^oncely: outbox replay: name a KEY, a filter/],
    [
      ['r1', '--since', '2026-12-01'],
      2,
      /^oncely: outbox replay: give a KEY or filter flags, not both/,
    ],
    [['--state', 'delivered'], 2, /^oncely: invalid option state: got "delivered"/],
    [['--state', 'nope'], 2, /^oncely: invalid option --state: got "nope"/],
    [['--since', 'yesterday'], 2, /^oncely: invalid option --since: got "yesterday"/],
    [['--dead', '--state', 'refused'], 2, /either --dead or --state/],
    [['--all', '-n', '0'], 2, /^oncely: invalid option --max-attempts/],
    [['d1'], 2, /^oncely: intent d1 is delivered: only a refused/],
    [['nope'], 2, /^oncely: no intent with key "nope"/],
    [['d1', '--dry-run'], 2, /a dead intent \(this one is delivered\)/],
  ];
  for (const [args, status, message] of cases) {
    const run = await runOncely(['outbox', 'replay', ...args, '--journal', journal]);
    assert.equal(run.status, status, `${args.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, message);
    assert.equal(run.stderr.trim().split('\n').length, 1, `one line: ${run.stderr}`);
    assert.equal(run.stdout, '');
  }
  assert.equal(await listing(), before);
});

test('replay --dry-run prints what it would reopen; replay by since, target and key reopens', async () => {
  const journal = await seededJournal();
  const dry = await runOncely([
    'outbox',
    'replay',
    '--since',
    iso(t + 1000),
    '--dry-run',
    '--journal',
    journal,
  ]);
  assert.equal(dry.status, 0, dry.stderr);
  assert.match(
    dry.stdout,
    /^would reopen: unknown .* u1 .*\nwould reopen: gave_up .* g1 .*\nreplay \(dry run\): 2 would be reopened, nothing changed\n$/,
  );
  assert.equal(await stateOf(journal, 'g1'), 'gave_up');

  const onB = await runOncely([
    'outbox',
    'replay',
    '--target',
    'http://b.test/hooks',
    '--journal',
    journal,
  ]);
  assert.equal(onB.status, 0, onB.stderr);
  assert.match(onB.stdout, /^reopened: unknown .* u1 .*\nreplay: 1 reopened;/);
  assert.equal(await stateOf(journal, 'u1'), 'pending');
  assert.equal(await stateOf(journal, 'c1'), 'cancelled', 'cancelled only when named');

  const byKey = await runOncely(['outbox', 'replay', 'r1', '--journal', journal]);
  assert.match(byKey.stdout, /^reopened: refused .* r1 /);
  const rest = await runOncely([
    'outbox',
    'replay',
    '--all',
    '--state',
    'gave_up,cancelled',
    '--journal',
    journal,
  ]);
  assert.match(rest.stdout, /replay: 2 reopened;/);
  assert.deepEqual(await Promise.all(['g1', 'c1', 'd1'].map((key) => stateOf(journal, key))), [
    'pending',
    'pending',
    'delivered',
  ]);
});

test('list filters, pages with --after and shows each attempt with --attempts', async () => {
  const journal = shared;
  const dead = await runOncely(['outbox', 'list', '--dead', '--attempts', '--journal', journal]);
  assert.equal(dead.status, 0, dead.stderr);
  const lines = dead.stdout.split('\n');
  assert.match(lines[0]!, /^unknown .* u1 /);
  assert.match(lines[1]!, /^ {4}#1 .* unknown .*ECONNRESET/);
  assert.match(lines[2]!, /^gave_up .* g1 /);
  const prefix = await runOncely([
    'outbox',
    'list',
    '--target-prefix',
    'http://b.test/',
    '--journal',
    journal,
  ]);
  assert.deepEqual(prefix.stdout.match(/ (c1|u1) /g), [' c1 ', ' u1 ']);
  const page = await runOncely(['outbox', 'list', '--limit', '2', '--journal', journal]);
  assert.match(page.stdout, /more: --after c1\n/);
  const next = await runOncely([
    'outbox',
    'list',
    '--limit',
    '2',
    '--after',
    'c1',
    '--journal',
    journal,
  ]);
  assert.deepEqual(next.stdout.match(/ (d1|u1|g1|r1|p1|c1) /g), [' d1 ', ' u1 ']);
  const help = await runOncely(['outbox', 'replay', '--help']);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /unknown intent may have done its work/);
  assert.match(help.stdout, /--dry-run/);
});

test('outbox ui refuses a bad port or token variable in one line, exit 2, before listening', async () => {
  for (const [args, message] of [
    [['--port', 'http'], /^oncely: invalid option --port: got "http"/],
    [['--token-env', 'NO_SUCH_VAR'], /^oncely: invalid option --token-env: got "NO_SUCH_VAR"/],
  ] as const) {
    const run = await runOncely(['outbox', 'ui', ...args, '--journal', shared]);
    assert.equal(run.status, 2, run.stderr);
    assert.match(run.stderr, message);
    assert.equal(run.stderr.trim().split('\n').length, 1);
  }
  const help = await runOncely(['outbox', 'ui', '--help']);
  assert.match(help.stdout, /token printed at start/);
});
