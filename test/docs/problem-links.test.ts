// Every problem the middleware answers links to a section of docs/ledger.md that exists: its
// `type` and its Link header are followed by people, so a renamed heading must fail here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  DEFAULT_PROBLEM_TYPE_BASE,
  PROBLEMS,
  problemResponse,
  type ProblemKind,
} from '#oncely/http/problem.js';
import { repoPath } from '../support/repo-path.js';

/**
 * The anchors GitHub gives a markdown file's headings: the heading's text lower-cased, inline
 * code and emphasis marks dropped, every character but letters, digits, spaces, `-` and `_`
 * removed, spaces made `-`; a repeated anchor gets `-1`, `-2`, ...
 */
function githubAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6} +(.+?) *#* *$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!
      .replace(/[`*]/g, '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

const LEDGER_DOC = 'https://github.com/oncely/oncely/blob/main/docs/ledger.md';
const ledgerDoc = readFileSync(repoPath('docs', 'ledger.md'), 'utf8');

test('the anchor rule: punctuation dropped, spaces made hyphens, repeats numbered', () => {
  const anchors = githubAnchors(
    '# A `code`: title\n## Problem: in-flight\n## Again\n## Again\n```\n# not a heading\n```\n',
  );
  assert.deepEqual([...anchors], ['a-code-title', 'problem-in-flight', 'again', 'again-1']);
});

test("every problem kind's type links to a heading of docs/ledger.md, repeated in Link", async () => {
  assert.ok(DEFAULT_PROBLEM_TYPE_BASE.startsWith(`${LEDGER_DOC}#`), DEFAULT_PROBLEM_TYPE_BASE);
  const anchors = githubAnchors(ledgerDoc);
  const missing: string[] = [];
  for (const kind of Object.keys(PROBLEMS) as ProblemKind[]) {
    const response = problemResponse(kind, 'why');
    const { type } = (await response.json()) as { type: string };
    assert.equal(response.headers.get('link'), `<${type}>; rel="describedby"`);
    const [page, anchor = ''] = type.split('#');
    assert.equal(page, LEDGER_DOC);
    if (!anchors.has(anchor)) missing.push(`${kind} -> #${anchor}`);
  }
  assert.deepEqual(missing, [], 'add a "### Problem: <kind>" heading to docs/ledger.md');
});

test("docs/ledger.md's own links to its sections name headings that exist", () => {
  const anchors = githubAnchors(ledgerDoc);
  const links = [...ledgerDoc.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]!);
  assert.ok(links.length > 0);
  assert.deepEqual(
    links.filter((link) => !anchors.has(link)),
    [],
  );
});

test("a service's own kind is a URN, without a Link to a page that does not describe it", async () => {
  const response = problemResponse(
    { code: 'assignment_closed', status: 403, title: 'Closed' },
    'x',
  );
  assert.equal(
    ((await response.json()) as { type: string }).type,
    'urn:oncely:problem:assignment-closed',
  );
  assert.equal(response.headers.get('link'), null);
});
