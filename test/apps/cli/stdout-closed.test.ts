import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CLI } from '../../support/repo-path.js';
import { runOncely } from '../../support/run-cli.js';
import { tempDir } from '../../support/temp-dir.js';

// Before: `outbox list | head -1` and `outbox endpoint add … | head -1` crashed with EPIPE, and
// the second lost the signing secret it shows once.
const dir = tempDir('oncely-stdout-closed-');
const journal = join(dir, 'journal.db');

/** Runs the binary with its stdout closed by the reader before it writes: as `| head -0`. */
function withStdoutClosed(args: string[]): Promise<{ status: number | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stderr })));
}

test('a closed stdout ends a listing quietly: no EPIPE, no stack trace, exit 0', async () => {
  for (let i = 0; i < 5; i++)
    await runOncely([
      'outbox',
      'add',
      'http://127.0.0.1:9/h',
      '--data',
      '{}',
      '--journal',
      journal,
      '--create',
    ]);
  const list = await withStdoutClosed(['outbox', 'list', '--attempts', '--journal', journal]);
  assert.equal(list.stderr, '');
  assert.equal(list.status, 0);
});

test('endpoint add shows its fresh secret before it adds: with stdout closed, nothing is added', async () => {
  const add = await withStdoutClosed([
    'outbox',
    'endpoint',
    'add',
    'shop',
    'http://127.0.0.1:9/h',
    '--journal',
    journal,
  ]);
  assert.equal(add.status, 1);
  assert.match(
    add.stderr,
    /^oncely: standard output is closed, so the signing secret could not be shown: nothing was changed\n$/,
  );
  const listed = await runOncely(['outbox', 'endpoint', 'list', '--journal', journal]);
  assert.equal(listed.stdout, '', 'no endpoint with a secret nobody saw');
  // In a capture (stdout open) the secret comes first: `| head -1` keeps it.
  const shown = await runOncely([
    'outbox',
    'endpoint',
    'add',
    'shop',
    'http://127.0.0.1:9/h',
    '--journal',
    journal,
  ]);
  assert.match(shown.stdout, /^signing secret \(shown once\): whsec_\S+\nadded: shop /);
  const rotate = await withStdoutClosed([
    'outbox',
    'endpoint',
    'rotate-secret',
    'shop',
    '--journal',
    journal,
  ]);
  assert.equal(rotate.status, 1);
  const json = await runOncely(['outbox', 'endpoint', 'list', '--json', '--journal', journal]);
  assert.equal((JSON.parse(json.stdout) as { secrets: number }[])[0]?.secrets, 1, 'not rotated');
});
