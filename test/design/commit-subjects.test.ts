// Commit subjects are at most 72 characters, the detail in the body: `git log --oneline` and
// review tools show the subject alone. Two checks hold it: the commit-msg hook
// (.githooks/commit-msg, scripts/commit-msg.js, installed by scripts/prepare.js) refuses a long
// subject as it is written, and this file reads the history since the base the rule starts from.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, repoPath } from '../support/repo-path.js';

/** The commit the rule starts from: the subjects before it were written without it. */
const BASE = 'd3fb2c9';
const MAX = 72;

function git(...args: string[]): { ok: boolean; stdout: string } {
  const result = spawnSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8' });
  return { ok: result.status === 0, stdout: result.stdout ?? '' };
}

test(`every commit subject after ${BASE} is at most ${MAX} characters`, (t) => {
  if (git('rev-parse', '--is-inside-work-tree').stdout.trim() !== 'true')
    return t.skip('not a git checkout (a tarball or a copy): no history to read');
  if (!git('cat-file', '-e', `${BASE}^{commit}`).ok)
    return t.skip(`the base commit ${BASE} is not in this clone (a shallow clone?)`);
  const log = git('log', '--format=%s', `${BASE}..HEAD`);
  assert.ok(log.ok, 'git log runs');
  const long = log.stdout
    .split('\n')
    .filter((subject) => subject.length > MAX)
    .map((subject) => `${subject.length}: ${subject}`);
  assert.deepEqual(long, [], `subjects over ${MAX} characters`);
});

/** Runs the commit-msg check (or the hook) on `message`; its exit code and what it printed. */
function checkMessage(
  message: string,
  via: 'script' | 'hook' = 'script',
): { status: number | null; stderr: string; error: Error | undefined } {
  const dir = mkdtempSync(join(tmpdir(), 'oncely-commit-msg-'));
  try {
    const file = join(dir, 'COMMIT_EDITMSG');
    writeFileSync(file, message);
    const result =
      via === 'hook'
        ? spawnSync(repoPath('.githooks', 'commit-msg'), [file], { encoding: 'utf8' })
        : spawnSync(process.execPath, [repoPath('scripts', 'commit-msg.js'), file], {
            encoding: 'utf8',
          });
    return { status: result.status, stderr: result.stderr, error: result.error };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the commit-msg hook passes a subject of 72 characters and refuses one of 73', () => {
  const body = '\nThe detail, as long as it needs to be: '.padEnd(200, 'x');
  assert.equal(checkMessage(`${'a'.repeat(MAX)}\n${body}\n`).status, 0);
  const refused = checkMessage(`${'a'.repeat(MAX + 1)}\n${body}\n`);
  assert.equal(refused.status, 1);
  assert.match(refused.stderr, /commit subject is 73 characters, at most 72/);
});

test("the hook reads the subject as git log's %s does: the first paragraph, without comments", () => {
  // Two lines with no blank line between them are one subject of 81 characters.
  assert.equal(checkMessage(`${'a'.repeat(40)}\n${'b'.repeat(40)}\n\nbody\n`).status, 1);
  // git's template comments and leading blank lines are not the message.
  const template = `# ${'c'.repeat(100)}\n`;
  assert.equal(checkMessage(`\n${template}short subject\n\n${template}body\n`).status, 0);
});

test('.githooks/commit-msg is executable and runs the check', () => {
  const passed = checkMessage('Fix the thing\n', 'hook');
  assert.equal(passed.status, 0, passed.error?.message ?? passed.stderr);
  const refused = checkMessage(`${'a'.repeat(MAX + 1)}\n`, 'hook');
  assert.equal(refused.status, 1);
  assert.match(refused.stderr, /commit subject is 73 characters/);
});
