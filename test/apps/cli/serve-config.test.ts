// Configuration mistakes of `oncely serve` stop it at start with one line and exit 2 (a bad
// option, as the docs promise), before anything listens: one token for two callers, a tokens
// file that is not there, timeouts out of range. And --no-notes-public makes a note read need a token.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXIT } from '#cli/cli/exit.js';
import { runOncely } from '../../support/run-cli.js';
import { startServeInProcess } from '../../support/serve-in-process.js';

// In-process (the program the binary runs, its output captured): each mistake stops it before
// anything listens, and the notes test's servers run here too (the end-to-end tests run the
// binary).
const serve = (args: readonly string[], env: NodeJS.ProcessEnv = {}) =>
  runOncely(['serve', '--port', '0', ...args], { ONCELY_TOKENS: '', ONCELY_DEV_TOKEN: '', ...env });

test('a configuration mistake is one line and exit 2, and the token itself is never printed', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'oncely-config-'));
  try {
    const tokens = join(dir, 'tokens');
    await writeFile(
      tokens,
      'alice=shared-token-0123456789\n# a comment\nbob=shared-token-0123456789\n',
    );
    const cases: Array<[string[], NodeJS.ProcessEnv, RegExp]> = [
      [
        ['--tokens', tokens],
        {},
        /^oncely: .*entry 3: the token of bob is already the token of alice \(.*entry 1\); give each caller its own\n$/,
      ],
      [
        ['--no-dev-token'],
        { ONCELY_TOKENS: 'alice=shared-token-0123456789,carol=shared-token-0123456789' },
        /^oncely: ONCELY_TOKENS entry 2: the token of carol is already the token of alice/,
      ],
      [
        [],
        {
          ONCELY_DEV_TOKEN: 'shared-token-0123456789',
          ONCELY_TOKENS: 'alice=shared-token-0123456789',
        },
        /^oncely: the dev token: the token of dev is already the token of alice/,
      ],
      [
        ['--tokens', '/nonexistent'],
        {},
        /^oncely: cannot read the tokens file \/nonexistent: ENOENT\n$/,
      ],
      [
        ['--request-timeout', '30'],
        {},
        /^oncely: invalid option --request-timeout: got "30", expected a duration such as 1500ms, 30s, 2m, 1h or 5d\n$/,
      ],
      [
        ['--headers-timeout', '1m', '--request-timeout', '30s'],
        {},
        /^oncely: invalid option --headers-timeout: got "1m", expected a duration from 1ms to the request timeout \(30s\)\n$/,
      ],
      [['--grace', 'soon'], {}, /^oncely: invalid option --grace: got "soon"/],
    ];
    for (const [args, env, pattern] of cases) {
      const result = await serve(['--data-dir', dir, ...args], env);
      const shown = `serve ${args.join(' ')}: ${result.stderr}`;
      assert.equal(result.status, EXIT.usage, shown);
      assert.match(result.stderr, pattern, shown);
      assert.ok(!result.stderr.includes('shared-token'), `the token leaked: ${shown}`);
      assert.equal(result.stdout, '', shown);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('notes are readable without a token by default; --no-notes-public asks for one', async () => {
  const open = await startServeInProcess(['--quiet']);
  let stopped: number;
  try {
    assert.equal((await fetch(`${open.url}/notes/note-1`)).status, 200);
  } finally {
    stopped = await open.stop();
  }
  assert.equal(stopped, EXIT.ok, open.stderr());
  const closed = await startServeInProcess(['--quiet', '--no-notes-public']);
  try {
    const anonymous = await fetch(`${closed.url}/notes/note-1`);
    assert.equal(anonymous.status, 401);
    assert.match(anonymous.headers.get('content-type') ?? '', /^application\/problem\+json/);
    assert.equal(
      (
        await fetch(`${closed.url}/notes/note-1`, {
          headers: { authorization: `Bearer ${closed.token}` },
        })
      ).status,
      200,
    );
  } finally {
    stopped = await closed.stop();
  }
  assert.equal(stopped, EXIT.ok, closed.stderr());
});
