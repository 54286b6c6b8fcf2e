import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { toNodeListener } from '#oncely/http/node-listener.js';
import { createJournal } from '#oncely/journal/index.js';
import { createFlakyReceiver } from '#cli/lab/outbox/flaky-receiver.js';
import { createSqliteJournalStore, openSqliteDatabase } from '#oncely/stores/sqlite/index.js';
import { seededRandom } from '#oncely/time/index.js';
import { CLI } from '../support/repo-path.js';
import { tempDir } from '../support/temp-dir.js';

/**
 * The sender's crash test, with real processes: 200 intents in a SQLite journal, delivered by
 * `oncely outbox run` to a receiver that fails 30% of requests and swallows 10% of acks; the
 * sender is SIGKILLed three times mid-run and started again. At the end every intent is delivered
 * or finished with its reason, and the receiver holds exactly one effect per delivered intent.
 */
const INTENTS = 200;
const dir = tempDir('oncely-outbox-crash-');

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as { port: number }).port}`),
    ),
  );
}

/** Set while a sender should die: the receiver kills it when the next request arrives, so an attempt is in flight. */
let killOnNextRequest: (() => void) | undefined;

/**
 * Runs the sender; once `killAfter` intents have finished in this run, SIGKILLs it as the
 * receiver takes its next request (mid-attempt). Resolves with what it printed and how it ended.
 */
async function runSender(
  journalFile: string,
  killAfter: number | undefined,
): Promise<{
  finished: number;
  signal: NodeJS.Signals | null;
  code: number | null;
  stderr: string;
}> {
  const child = spawn(
    process.execPath,
    [
      CLI,
      'outbox',
      'run',
      '--journal',
      journalFile,
      '--lease',
      '1s',
      '--batch',
      '8',
      '--poll',
      '20ms',
      '--worker',
      `sender-${Date.now()}`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on('exit', (code, signal) => resolve([code, signal])),
  );
  let finished = 0;
  for await (const line of createInterface({ input: child.stdout })) {
    if (/^(delivered|refused|gave_up|unknown) /.test(line)) finished += 1;
    if (killAfter !== undefined && finished >= killAfter && killOnNextRequest === undefined) {
      killOnNextRequest = () => child.kill('SIGKILL');
    }
  }
  killOnNextRequest = undefined;
  const [code, signal] = await exited;
  return { finished, signal, code, stderr };
}

it('200 intents, a receiver failing 30% and swallowing 10% of acks, the sender SIGKILLed three times: one effect per delivered intent, none lost', async () => {
  const receiver = createFlakyReceiver({
    failRate: 0.3,
    swallowRate: 0.1,
    random: seededRandom(14),
    effectMs: 5,
  });
  const server = createServer(
    toNodeListener(
      (request, connection) => {
        const kill = killOnNextRequest;
        killOnNextRequest = undefined;
        kill?.();
        return receiver.handler(request, connection);
      },
      { onError: () => undefined },
    ),
  );
  const url = await listen(server);
  const journalFile = join(dir, 'journal.db');
  try {
    const store = createSqliteJournalStore({ database: () => openSqliteDatabase(journalFile) });
    const journal = createJournal({ store });
    for (let i = 0; i < INTENTS; i++) {
      await journal.record({
        key: `order-${i}`,
        target: `${url}/orders`,
        body: JSON.stringify({ order: i }),
        headers: { 'content-type': 'application/json' },
        maxAttempts: 10,
        baseDelayMs: 5,
        maxDelayMs: 40,
        attemptTimeoutMs: 500,
      });
    }
    await store.close();

    const runs = [];
    for (const killAfter of [30, 50, 50]) {
      const run = await runSender(journalFile, killAfter);
      assert.equal(run.signal, 'SIGKILL', `the sender was killed mid-run (stderr: ${run.stderr})`);
      runs.push(run.finished);
    }
    const last = await runSender(journalFile, undefined);
    assert.equal(last.code, 0, `the last run finished the work (stderr: ${last.stderr})`);
    runs.push(last.finished);

    const check = createSqliteJournalStore({ database: () => openSqliteDatabase(journalFile) });
    const intents = await check.list({ limit: 1000 });
    assert.equal(intents.length, INTENTS, 'no intent lost');
    const counts = await check.counts();
    assert.equal(counts.pending, 0, 'every intent finished');
    let interrupted = 0;
    // One snapshot of the effects: each effects() call copies them all.
    const effectsByKey = receiver.effects();
    for (const intent of intents) {
      const effects = effectsByKey.get(intent.key) ?? 0;
      if (intent.state === 'delivered')
        assert.equal(effects, 1, `${intent.key} delivered with exactly one effect`);
      else {
        assert.ok(effects <= 1, `${intent.key} never done twice`);
        assert.ok(intent.outcome?.stopReason, `${intent.key} ${intent.state} with a reason`);
      }
      const attempts = await check.attempts(intent.key);
      assert.equal(
        attempts.length,
        intent.attemptCount,
        `${intent.key}: every attempt written down`,
      );
      assert.ok(
        attempts.every((a) => a.endedAt !== null),
        `${intent.key}: no attempt left open`,
      );
      interrupted += attempts.filter((a) => a.detail?.includes('stopped mid-attempt')).length;
    }
    assert.ok(
      interrupted >= 1,
      'at least one kill landed mid-attempt, and the restarted sender recorded it as unknown',
    );
    assert.ok(counts.delivered >= INTENTS - 2, `almost all delivered: ${JSON.stringify(counts)}`);
    const requests = [...receiver.requests.values()].reduce((a, b) => a + b, 0);
    const effects = [...effectsByKey.values()].reduce((a, b) => a + b, 0);
    console.log(
      `# runs finished ${runs.join(' + ')} intents; ${JSON.stringify(counts)}; ${requests} requests, ${effects} effects, ${interrupted} attempts interrupted by a kill`,
    );
    await check.close();
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
