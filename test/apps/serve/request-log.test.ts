import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Ledger } from '#oncely/ledger/ledger.js';
import { EXECUTE_KINDS, type ExecuteResult } from '#oncely/ledger/ledger-result.js';
import { createRequestLog, type RequestLogLine } from '#cli/serve/request-log.js';
import { VirtualClock } from '#oncely/time/virtual-clock.js';

const receipt = { status: 201, headers: [], body: new Uint8Array() };
const RESULTS: Record<(typeof EXECUTE_KINDS)[number], ExecuteResult> = {
  executed: { kind: 'executed', receipt, firstSeenAt: 0, completedAt: 0, expiresAt: 0 },
  replayed: { kind: 'replayed', receipt, firstSeenAt: 0, completedAt: 0, expiresAt: 0 },
  conflict: { kind: 'conflict', state: 'completed', firstSeenAt: 0 },
  in_flight: { kind: 'in_flight', retryAfterMs: 1, leaseExpiresAt: 1, firstSeenAt: 0 },
  lease_lost: { kind: 'lease_lost', retryAfterMs: 1 },
  not_stored: { kind: 'not_stored', receipt },
  unavailable: { kind: 'unavailable', stage: 'claim', cause: new Error('down') },
};

function setUp() {
  const lines: RequestLogLine[] = [];
  const clock = new VirtualClock({ startAt: Date.UTC(2026, 0, 1) });
  const log = createRequestLog({
    clock,
    write: (line) => lines.push(JSON.parse(line) as RequestLogLine),
  });
  return { lines, clock, log };
}

test('one line per request, with the outcome the ledger answered (claimed or deferred): new, replay, conflict, in-flight or none', async () => {
  const { lines, clock, log } = setUp();
  let next: ExecuteResult = RESULTS.executed;
  const fake = {
    execute: async () => next,
    executeDeferred: async () => next,
  } as unknown as Ledger<unknown>;
  const ledger = log.observe(fake);
  const handler = log.wrap(async (request) => {
    const asked = { scope: 's', key: 'k', fingerprint: 'f' };
    if (request.method === 'POST' && request.url.includes('deferred'))
      await ledger.executeDeferred(asked, () => ({ receipt, writes: [] }));
    else if (request.method === 'POST') await ledger.execute(asked, () => receipt);
    log.note({ caller: 'alice' });
    await clock.sleep(7);
    return new Response(null, { status: 204 });
  });
  const expected: Record<string, string> = {
    executed: 'new',
    replayed: 'replay',
    conflict: 'conflict',
    in_flight: 'in-flight',
    lease_lost: 'in-flight',
    not_stored: 'none',
    unavailable: 'none',
  };
  for (const [i, kind] of EXECUTE_KINDS.entries()) {
    next = RESULTS[kind];
    await handler(
      new Request(`http://x/dropbox/submissions?q=1${i % 2 === 1 ? '&deferred' : ''}`, {
        method: 'POST',
        headers: { 'idempotency-key': `key-${kind}` },
      }),
    );
  }
  await handler(new Request('http://x/dropbox/store'));
  assert.deepEqual(
    lines.map((l) => l.outcome),
    [...EXECUTE_KINDS.map((k) => expected[k]), 'none'],
  );
  assert.deepEqual(lines[0], {
    at: '2026-01-01T00:00:00.000Z',
    method: 'POST',
    path: '/dropbox/submissions',
    key: 'key-executed',
    caller: 'alice',
    status: 204,
    durationMs: 7,
    outcome: 'new',
  });
  assert.equal(lines.at(-1)?.key, null);
});

test('a dropped connection logs status null and dropped: true; a thrown handler logs 500; keys are cut at 300 characters', async () => {
  const { lines, log } = setUp();
  const dropped: string[] = [];
  const handler = log.wrap(async (request, connection) => {
    if (request.method === 'DELETE') throw new Error('boom');
    connection?.drop();
    return new Response(null, { status: 204 });
  });
  await handler(
    new Request('http://x/hooks/a', {
      method: 'POST',
      headers: { 'idempotency-key': 'k'.repeat(1000) },
    }),
    { drop: () => void dropped.push('x') },
  );
  await assert.rejects(
    async () => handler(new Request('http://x/a', { method: 'DELETE' })),
    /boom/,
  );
  assert.deepEqual(dropped, ['x']);
  assert.equal(lines[0]?.status, null);
  assert.equal(lines[0]?.dropped, true);
  assert.equal(lines[0]?.key?.length, 300);
  assert.equal(lines[1]?.status, 500);
  assert.equal('dropped' in lines[1]!, false);
});

test('hook arrivals map to outcomes too', async () => {
  const { lines, log } = setUp();
  const answers = ['completed', 'swallowed', 'replayed', 'key_reused', 'rejected'] as const;
  for (const answer of answers) {
    await log.wrap(async () => {
      log.noteHit(answer);
      return new Response('');
    })(new Request('http://x/hooks/h', { method: 'POST' }));
  }
  assert.deepEqual(
    lines.map((l) => l.outcome),
    ['new', 'new', 'replay', 'conflict', 'none'],
  );
});

test('each log fills in its own requests only, when one runs inside another and side by side', async () => {
  const outer = setUp();
  const inner = setUp();
  const innerHandler = inner.log.wrap(async () => {
    inner.log.note({ caller: 'bob', outcome: 'replay' });
    outer.log.note({ caller: 'alice' }); // the outer request is still under way here
    return new Response(null, { status: 200 });
  });
  const outerHandler = outer.log.wrap(async (request) => {
    outer.log.note({ outcome: 'new' });
    await innerHandler(new Request('http://x/inner'));
    // A request of the inner log alone, side by side: its notes never reach this line.
    await Promise.all([
      inner.log.wrap(async () => {
        inner.log.note({ caller: 'carol' });
        return new Response(null, { status: 202 });
      })(new Request('http://x/beside')),
      Promise.resolve(inner.log.note({ caller: 'nobody' })),
    ]);
    return new Response(null, { status: request.method === 'POST' ? 201 : 200 });
  });
  await outerHandler(new Request('http://x/outer', { method: 'POST' }));
  inner.log.note({ caller: 'nobody' }); // outside every request: nothing to fill in
  assert.deepEqual(
    outer.lines.map((l) => [l.path, l.caller, l.outcome, l.status]),
    [['/outer', 'alice', 'new', 201]],
  );
  assert.deepEqual(
    inner.lines.map((l) => [l.path, l.caller, l.outcome, l.status]),
    [
      ['/inner', 'bob', 'replay', 200],
      ['/beside', 'carol', 'none', 202],
    ],
  );
});
