// Citations a reader can follow: comments and docs point at docs/origins.md sections, never at a
// seed number, an issue or a path outside the repository; and every origins link names a section
// that exists.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sourceFiles } from '../support/layer-imports.js';
import { repoPath } from '../support/repo-path.js';

const UNFOLLOWABLE = /\b[Ss]eed 00\d\b|\b[Ii]ssue \d+|\/work\/|shared\/seeds/;

/** The comment part of a source line: a comment line, or what follows ` // `. */
function commentOf(line: string): string | undefined {
  const trimmed = line.trimStart();
  if (/^(\/\/|\/\*|\*)/.test(trimmed)) return trimmed;
  const at = line.indexOf(' // ');
  return at >= 0 ? line.slice(at) : undefined;
}

test('no comment in src, test, bench or web/src cites a seed number, an issue or a path outside the repository', () => {
  const found: string[] = [];
  for (const dir of ['src', 'test', 'bench', join('web', 'src')]) {
    for (const file of sourceFiles(repoPath(dir))) {
      readFileSync(repoPath(dir, file), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          const comment = commentOf(line);
          if (
            comment !== undefined &&
            UNFOLLOWABLE.test(comment) &&
            !comment.includes('UNFOLLOWABLE')
          )
            found.push(`${dir}/${file}:${i + 1}`);
        });
    }
  }
  assert.deepEqual(found, []);
});

test("the simulator page's own words cite no seed number either (web/index.html and web/src)", () => {
  const found: string[] = [];
  const check = (path: string, text: string): void =>
    text.split('\n').forEach((line, i) => {
      if (UNFOLLOWABLE.test(line)) found.push(`${path}:${i + 1}`);
    });
  check('web/index.html', readFileSync(repoPath('web', 'index.html'), 'utf8'));
  for (const file of sourceFiles(repoPath('web', 'src')))
    check(`web/src/${file}`, readFileSync(repoPath('web', 'src', file), 'utf8'));
  assert.deepEqual(found, []);
});

test('the docs cite docs/origins.md, and every link into it names one of its four sections', () => {
  const origins = readFileSync(repoPath('docs', 'origins.md'), 'utf8');
  const anchors = [...origins.matchAll(/^## (.+)$/gm)].map((m) =>
    m[1]!
      .toLowerCase()
      .replace(/[^a-z0-9 -]/g, '')
      .replace(/ /g, '-'),
  );
  assert.deepEqual(anchors, [
    'the-dropboxs-swallowed-ack',
    'the-retry-rule-simulator',
    'the-webhook-storm',
    'the-notes-retry-contract',
  ]);
  for (const doc of [
    'README.md',
    'docs/design.md',
    'docs/serve.md',
    'docs/simulator.md',
    'docs/page.md',
  ]) {
    const text = readFileSync(repoPath(doc), 'utf8');
    assert.doesNotMatch(text, UNFOLLOWABLE, doc);
    for (const [, anchor] of text.matchAll(/origins\.md#([a-z0-9-]+)/g))
      assert.ok(anchors.includes(anchor!), `${doc} links to #${anchor}`);
  }
});
