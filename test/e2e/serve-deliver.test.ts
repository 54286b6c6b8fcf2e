// The end-to-end test: `oncely serve` on a free port, `oncely deliver` of a submission
// through a swallowed ack, both as child processes. The store shows one row; the client's report
// shows one unknown outcome, then the replayed receipt.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { DeliverResult } from '#cli/cli/commands/deliver.js';
import { CLI } from '../support/repo-path.js';
import { startServeProcess } from './serve-process.js';

const run = promisify(execFile);

test('serve + deliver through a swallowed ack: one row, one unknown attempt, then the replayed receipt', async () => {
  const serve = await startServeProcess(['--fault', 'swallow-first-ack']);
  try {
    assert.match(serve.token, /^[0-9a-f]{32}$/, 'a fresh dev token is printed at start');
    const { stdout } = await run(process.execPath, [
      CLI,
      'deliver',
      `${serve.url}/dropbox/submissions`,
      '--data',
      '{"student":"achen","assignment":"lab3"}',
      '--key',
      'achen:lab3:v1',
      '--header',
      `Authorization: Bearer ${serve.token}`,
      '--base-delay',
      '10ms',
      '--json',
    ]);
    const result = JSON.parse(stdout) as DeliverResult;
    assert.deepEqual(
      result.report.attempts.map((a) => a.outcome),
      ['unknown', 'ok'],
    );
    assert.equal(result.report.outcome, 'ok');
    assert.equal(result.exitCode, 0);
    assert.equal(result.response?.status, 201);
    assert.equal(result.response?.idempotentReplayed, true);
    assert.deepEqual(result.response?.bodyJson, {
      key: 'achen:lab3:v1',
      student: 'achen',
      assignment: 'lab3',
      status: 'accepted',
      writes: 1,
    });

    const dump = (await (
      await fetch(`${serve.url}/dropbox/store`, {
        headers: { authorization: `Bearer ${serve.token}` },
      })
    ).json()) as { rows: unknown[] };
    assert.deepEqual(dump.rows, [
      { key: 'achen:lab3:v1', student: 'achen', assignment: 'lab3', status: 'accepted', writes: 1 },
    ]);

    // The server's log: the first POST committed and was dropped, the second was a replay.
    const posts = serve
      .stdout()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line['path'] === '/dropbox/submissions');
    assert.deepEqual(
      posts.map((l) => [l['outcome'], l['status']]),
      [
        ['new', null],
        ['replay', 201],
      ],
    );

    serve.child.kill('SIGTERM');
    assert.equal(await serve.exited, 0);
  } finally {
    await serve.cleanUp();
  }
});
