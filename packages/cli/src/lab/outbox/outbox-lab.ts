import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, newKey, createJournal, createOutboxWorker } from 'oncely';
import { toNodeListener } from 'oncely/http';
import { createSqliteJournalStore, openSqliteDatabase } from 'oncely/stores/sqlite';
import { createFlakyReceiver, type FlakyReceiver } from './flaky-receiver.js';

/** What `oncely lab outbox` found: the lines it prints and the effects each story left. */
export interface OutboxLabResult {
  readonly lines: readonly string[];
  readonly journalEffects: number;
  readonly naiveEffects: number;
}

/** A receiver whose first request does the work and loses its ack; every later one is answered. */
function firstAckSwallowed(idempotent: boolean): FlakyReceiver {
  const draws = [0.35];
  return createFlakyReceiver({
    failRate: 0.3,
    swallowRate: 0.1,
    effectMs: 0,
    idempotent,
    random: { next: () => draws.shift() ?? 0.99 },
  });
}

async function serve(receiver: FlakyReceiver): Promise<{ url: string; server: Server }> {
  const server = createServer(toNodeListener(receiver.handler, { onError: () => undefined }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/orders`, server };
}

async function stop(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

const total = (receiver: FlakyReceiver): number =>
  [...receiver.effects().values()].reduce((a, b) => a + b, 0);

/**
 * The dropbox story's incident across a restart (docs/origins.md). The sender's first attempt does the work and loses its
 * ack; the sender dies before its second attempt (here: its worker and journal handle are dropped
 * and a new sender opens the same file; test/journal/outbox-crash.test.ts does it with SIGKILL).
 * With the journal, the new sender finds the intent, resumes it under the same key and the
 * receiver replays its receipt: one effect. Without it, the key died with the process, the new
 * sender makes a new one, and the receiver, rightly, does the work again: two effects.
 */
export async function runOutboxLab(): Promise<OutboxLabResult> {
  const lines: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'oncely-lab-outbox-'));
  const body = JSON.stringify({ student: 'achen', assignment: 'lab3' });
  try {
    lines.push('=== with a journal: the intent is recorded before its first attempt ===');
    const receiver = firstAckSwallowed(true);
    const { url, server } = await serve(receiver);
    const file = join(dir, 'journal.db');
    const open = () => createSqliteJournalStore({ database: () => openSqliteDatabase(file) });
    const first = open();
    await createJournal({ store: first }).record({
      key: 'achen:lab3:v1',
      target: url,
      body,
      maxAttempts: 3,
      baseDelayMs: 10,
      createdBy: 'lab',
    });
    lines.push('sender 1: recorded achen:lab3:v1 in the journal');
    await createOutboxWorker({ store: first, owner: 'sender-1', leaseMs: 1000 }).runOnce();
    const afterFirst = (await first.attempts('achen:lab3:v1'))[0];
    lines.push(
      `sender 1: attempt 1 -> ${afterFirst?.outcome} (${afterFirst?.detail ?? afterFirst?.status}); the receiver has ${total(receiver)} effect`,
    );
    await first.close();
    lines.push('sender 1: dies before attempt 2');
    const second = open();
    const resumed = await second.get('achen:lab3:v1');
    lines.push(
      `sender 2: found achen:lab3:v1 in the journal, ${resumed?.state}, ${resumed?.attemptCount} attempt made: resuming under the same key`,
    );
    await createOutboxWorker({ store: second, owner: 'sender-2' }).resume();
    const final = await second.get('achen:lab3:v1');
    lines.push(
      `sender 2: ${final?.state} with status ${final?.outcome?.status} after ${final?.attemptCount} attempts`,
    );
    await second.close();
    await stop(server);
    const journalEffects = total(receiver);
    lines.push(`receiver: ${journalEffects} effect for achen:lab3 (expected 1)`);

    lines.push('', "=== without a journal: the key lives in the sender's memory ===");
    const naive = firstAckSwallowed(true);
    const naiveServer = await serve(naive);
    const client = createClient({ baseDelayMs: 10 });
    const send = async (key: string): Promise<string> => {
      try {
        const { response } = await client.request(naiveServer.url, {
          method: 'POST',
          body,
          idempotencyKey: key,
          maxAttempts: 1,
        });
        return String(response.status);
      } catch {
        return 'no answer';
      }
    };
    const lostKey = newKey();
    lines.push(
      `sender 1: key ${lostKey} (in memory); attempt 1 -> ${await send(lostKey)}; the receiver has ${total(naive)} effect`,
    );
    lines.push('sender 1: dies before attempt 2, and its key with it');
    const freshKey = newKey();
    lines.push(
      `sender 2: nothing to resume; a new key ${freshKey}; attempt 1 -> ${await send(freshKey)}`,
    );
    await stop(naiveServer.server);
    const naiveEffects = total(naive);
    lines.push(
      `receiver: ${naiveEffects} effects for achen:lab3, one per key: the same lab submitted twice`,
    );
    return { lines, journalEffects, naiveEffects };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
