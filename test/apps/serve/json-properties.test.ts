// Whatever a body holds, the JSON services answer it without a 5xx: random JSON, repeated member
// names, lone surrogates, deep nesting and random bytes, on the dropbox and the notes. A 5xx is
// in every client's retry list; a request that can never succeed must not be retried.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startTestServer, submissionHeaders, TOKENS, type TestServer } from './server-harness.js';

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

const NAMES = [
  'student',
  'assignment',
  'expectedVersion',
  'title',
  '__proto__',
  'a',
  '\\ud800',
  's\\u0074udent',
];
const scalar = fc.oneof(
  fc.json({ maxDepth: 1 }),
  fc.constantFrom('"\\ud800"', '"a\\udfffb"', '"\\ud83d\\ude00"', '"\\u0000"', '1e400', '-0'),
);
/** An object written by hand, so names can repeat (JSON.stringify never repeats one). */
const objectText = fc
  .array(fc.tuple(fc.constantFrom(...NAMES), scalar), { minLength: 1, maxLength: 6 })
  .map((members) => `{${members.map(([name, value]) => `"${name}":${value}`).join(',')}}`);
const deep = fc
  .tuple(
    fc.integer({ min: 1, max: 3000 }),
    fc.constantFrom(['[', ']'], ['{"a":', '}']),
    fc.boolean(),
  )
  .map(
    ([depth, [open, close], closed]) =>
      `${open!.repeat(depth)}1${closed ? close!.repeat(depth) : ''}`,
  );
const loneSurrogates = fc
  .string({ unit: 'binary', maxLength: 20 })
  .map((text) => JSON.stringify({ student: text, assignment: text }));
const body = fc.oneof(
  fc.json({ maxDepth: 4 }).map((text) => new TextEncoder().encode(text)),
  objectText.map((text) => new TextEncoder().encode(text)),
  deep.map((text) => new TextEncoder().encode(text)),
  loneSurrogates.map((text) => new TextEncoder().encode(text)),
  fc.uint8Array({ maxLength: 64 }),
);

let key = 0;
test('random JSON bodies, repeated names, lone surrogates, deep nesting: never a 5xx, on the dropbox or the notes', async () => {
  await fc.assert(
    fc.asyncProperty(body, fc.constantFrom('dropbox', 'notes'), async (bytes, service) => {
      const response = await fetch(
        `${t.url}${service === 'dropbox' ? '/dropbox/submissions' : '/notes/note-1'}`,
        {
          method: service === 'dropbox' ? 'POST' : 'PATCH',
          headers: submissionHeaders(TOKENS.dev, `prop-${key++}`),
          body: bytes,
        },
      );
      const text = await response.text();
      assert.ok(response.status < 500, `${response.status}: ${text.slice(0, 300)}`);
    }),
    { numRuns: 150 },
  );
  assert.equal((await fetch(`${t.url}/healthz`)).status, 200);
});
