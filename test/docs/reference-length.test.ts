// The docs are reference pages for users: the figures that hold now and the commands that
// reproduce them. Measurement history belongs in git, and a page that only grows stops being read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { repoPath } from '../support/repo-path.js';

test('docs/performance.md stays under 300 lines', () => {
  const lines = readFileSync(repoPath('docs', 'performance.md'), 'utf8').split('\n').length - 1;
  assert.ok(lines < 300, `${lines} lines: fold a section or move history to git`);
});
