// bench/profile-breakdown --parts outbox: a sample is charged to the innermost frame that names a
// part of a delivery; a store helper is charged to the store method above it.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { breakdown } from '../../bench/profile-breakdown.js';
import { OUTBOX_SCHEME } from '../../bench/outbox-parts.js';

const DIST = 'file:///repo/packages/oncely/dist';

/** A profile of one chain of frames per sample, outermost first, each sample 1 ms. */
function profileOf(...stacks: (readonly [string, string])[][]) {
  const nodes: {
    id: number;
    callFrame: { functionName: string; url: string };
    children: number[];
  }[] = [{ id: 1, callFrame: { functionName: '(root)', url: '' }, children: [] }];
  const samples: number[] = [];
  for (const stack of stacks) {
    let parent = nodes[0]!;
    for (const [functionName, url] of stack) {
      const node = { id: nodes.length + 1, callFrame: { functionName, url }, children: [] };
      nodes.push(node);
      parent.children.push(node.id);
      parent = node;
    }
    samples.push(parent.id);
  }
  return { nodes, samples, timeDeltas: samples.map(() => 1000) };
}

it('charges HTTP, store methods and the driver to their parts, helpers to their callers', () => {
  const result = breakdown(
    profileOf(
      [
        ['sendAttempt', `${DIST}/journal/send-attempt.js`],
        ['toResponse', `${DIST}/client/node-http-fetch.js`],
        ['ReadableStream', 'node:internal/webstreams/readablestream'],
      ],
      [
        ['send', `${DIST}/client/node-http-fetch.js`],
        ['ClientRequest', 'node:_http_client'],
      ],
      [
        ['settle', `${DIST}/stores/sql-journal-store.js`],
        ['toBuffer', `${DIST}/stores/journal-row.js`],
      ],
      [['parse', 'file:///repo/node_modules/pg-protocol/dist/parser.js']],
      [['(garbage collector)', '']],
    ),
    OUTBOX_SCHEME,
  );
  const ms = (part: string): number => result.parts.get(part) ?? 0;
  assert.equal(ms("HTTP: oncely's Fetch adapter (Response, Headers, web streams)"), 1);
  assert.equal(ms('HTTP: node:http request and response'), 1);
  assert.equal(ms('settle (next step, SQL)'), 1, 'journal-row helper charged to settle');
  assert.equal(ms('PostgreSQL driver (every statement)'), 1);
  assert.equal(ms('garbage collection'), 1);
  assert.equal(result.busyMs, 5);
});
