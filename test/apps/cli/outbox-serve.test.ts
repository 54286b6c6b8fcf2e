import { join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runOncely } from '../../support/run-cli.js';
import { tempDir } from '../../support/temp-dir.js';

const dir = tempDir('oncely-outbox-serve-cli-');

test('outbox serve: bad flags are one line and exit 2, before anything is opened', async () => {
  const journal = join(dir, 'never.db');
  const cases: [string[], Record<string, string>, RegExp][] = [
    [['--port', 'eighty'], {}, /^oncely: invalid option --port/],
    [['--no-dev-token'], {}, /^oncely: no callers: pass --tokens FILE or ONCELY_TOKENS/],
    [['--tokens', join(dir, 'missing.txt')], {}, /^oncely: cannot read the tokens file/],
    [
      [],
      { ONCELY_TOKENS: 'ops=short' },
      /^oncely: ONCELY_TOKENS entry 1: token for ops must be at least 16/,
    ],
    [
      ['--db', 'mysql://x', '--no-dev-token'],
      { ONCELY_TOKENS: 'ops=0123456789abcdef' },
      /^oncely: invalid option --db/,
    ],
  ];
  for (const [args, env, message] of cases) {
    const result = await runOncely(['outbox', 'serve', '--journal', journal, ...args], env);
    assert.equal(result.status, 2, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stderr, message, args.join(' '));
    assert.equal(result.stderr.split('\n').length, 2, 'one line');
    assert.equal(result.stdout, '');
  }
});
