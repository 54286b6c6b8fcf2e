// Citations a reader can follow: comments and docs point at docs/origins.md sections, never at a
// seed number, an issue or a path outside the repository; and every origins link names a section
// that exists.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { sourceFiles } from '../support/layer-imports.js';
import { CLI_SRC, LIBRARY_SRC, repoPath, WEB, WEB_SRC } from '../support/repo-path.js';

const UNFOLLOWABLE = /\b[Ss]eed 00\d\b|\b[Ii]ssue \d+|\/work\/|shared\/seeds/;

/** The comment part of a source line: a comment line, or what follows ` // `. */
function commentOf(line: string): string | undefined {
  const trimmed = line.trimStart();
  if (/^(\/\/|\/\*|\*)/.test(trimmed)) return trimmed;
  const at = line.indexOf(' // ');
  return at >= 0 ? line.slice(at) : undefined;
}

test('no comment in the packages, test or bench cites a seed number, an issue or a path outside the repository', () => {
  const found: string[] = [];
  for (const dir of [LIBRARY_SRC, CLI_SRC, 'test', 'bench', WEB_SRC]) {
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

test("the simulator page's own words cite no seed number either (its index.html and src)", () => {
  const found: string[] = [];
  const check = (path: string, text: string): void =>
    text.split('\n').forEach((line, i) => {
      if (UNFOLLOWABLE.test(line)) found.push(`${path}:${i + 1}`);
    });
  check(`${WEB}/index.html`, readFileSync(repoPath(WEB, 'index.html'), 'utf8'));
  for (const file of sourceFiles(repoPath(WEB_SRC)))
    check(`${WEB_SRC}/${file}`, readFileSync(repoPath(WEB_SRC, file), 'utf8'));
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
