import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { spawn } from 'node:child_process';
import { createJournal } from '#oncely/journal/index.js';
import { createSqliteJournalStore, openSqliteDatabase } from '#oncely/stores/sqlite/index.js';
import { CLI } from '../../support/repo-path.js';
import { runOncely } from '../../support/run-cli.js';
import { tempDir } from '../../support/temp-dir.js';
import { startReceiver } from './outbox-api-fixture.js';

const dir = tempDir('oncely-run-metrics-');

/**
 * `oncely outbox run --watch --metrics-port 0` as its own process (the binary), its metrics
 * address read from stderr; stop() sends SIGTERM and resolves with the exit code.
 */
async function runProcess(args: readonly string[]) {
  const child = spawn(process.execPath, [
    CLI,
    'outbox',
    'run',
    '--watch',
    '--metrics-port',
    '0',
    ...args,
  ]);
  let err = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const metrics = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      const found = /^metrics: (http:\/\/127\.0\.0\.1:\d+\/metrics)$/m.exec(err)?.[1];
      if (found) resolve(found);
    });
    void exited.then((code) => reject(new Error(`outbox run exited (${code}):\n${err}`)));
  });
  return {
    metrics,
    stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

const sample = (text: string, series: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

test('outbox run --metrics-port serves the metrics while the worker runs', async () => {
  const receiver = await startReceiver();
  const file = join(dir, 'journal.db');
  const store = createSqliteJournalStore({ database: () => openSqliteDatabase(file) });
  const journal = createJournal({ store });
  await journal.endpoints.add({ id: 'shop', url: `${receiver.url}/shop` });
  await journal.record({ key: 'ok-1', endpoint: 'shop', body: '{}' });
  await journal.record({
    key: 'no-1',
    target: `${receiver.url}/refuse`,
    body: 'x',
    maxAttempts: 1,
  });
  await journal.close();
  const run = await runProcess(['--poll', '20ms', '--journal', file]);
  try {
    // The worker settles as it goes: scrape until both settlements are counted.
    let text = '';
    for (let turn = 0; turn < 500; turn++) {
      text = await (await fetch(run.metrics)).text();
      if (sample(text, 'oncely_outbox_messages_finished_total{endpoint="",state="refused"}') === 1)
        if (sample(text, 'oncely_outbox_attempts_total{endpoint="shop",outcome="ok"}') === 1) break;
    }
    assert.equal(
      sample(text, 'oncely_outbox_attempts_total{endpoint="shop",outcome="ok"}'),
      1,
      text,
    );
    assert.equal(sample(text, 'oncely_outbox_attempts_total{endpoint="",outcome="fail"}'), 1);
    assert.equal(sample(text, 'oncely_outbox_attempt_duration_seconds_count{endpoint="shop"}'), 1);
    assert.equal(sample(text, 'oncely_outbox_pending_messages'), 0);
    assert.equal(sample(text, 'oncely_outbox_endpoint_state{endpoint="shop",state="active"}'), 1);
    const elsewhere = await fetch(run.metrics.replace('/metrics', '/other'));
    assert.equal(elsewhere.status, 404);
  } finally {
    assert.equal(await run.stop(), 0);
    await receiver.close();
  }
  await assert.rejects(fetch(run.metrics), 'the metrics stop with the run');
});

test('a bad --metrics-port is refused before anything runs: exit 2, one line', async () => {
  for (const port of ['abc', '70000', '-1']) {
    const run = await runOncely([
      'outbox',
      'run',
      '--metrics-port',
      port,
      '--journal',
      join(dir, 'journal.db'),
    ]);
    assert.equal(run.status, 2, run.stderr);
    assert.match(run.stderr, /^oncely: invalid option --metrics-port/);
    assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
  }
});
