#!/usr/bin/env node
// Refuses a commit whose subject is longer than 72 characters: `git log --oneline`, a shortlog
// and a review tool show the subject alone, cut at about that width; the detail goes in the body,
// after a blank line. Run by .githooks/commit-msg as `node scripts/commit-msg.js MESSAGE_FILE`;
// test/design/commit-subjects.test.ts reads the history for the same limit.
import { readFileSync } from 'node:fs';

const MAX_SUBJECT_LENGTH = 72;

/**
 * The subject as `git log --format=%s` shows it: the first paragraph, its lines joined by a
 * space. Comment lines (git's template) and leading blank lines are not the message.
 */
function subjectOf(message) {
  const lines = message
    .split('\n')
    .filter((line) => !line.startsWith('#'))
    .map((line) => line.trimEnd());
  const start = lines.findIndex((line) => line !== '');
  if (start < 0) return '';
  const end = lines.indexOf('', start);
  return lines
    .slice(start, end < 0 ? undefined : end)
    .map((line) => line.trim())
    .join(' ');
}

const file = process.argv[2];
if (file === undefined) {
  console.error('usage: node scripts/commit-msg.js MESSAGE_FILE');
  process.exit(2);
}
const subject = subjectOf(readFileSync(file, 'utf8'));
if (subject.length > MAX_SUBJECT_LENGTH) {
  console.error(
    `commit subject is ${subject.length} characters, at most ${MAX_SUBJECT_LENGTH}: ` +
      'shorten it and put the detail in the body, after a blank line',
  );
  process.exit(1);
}
