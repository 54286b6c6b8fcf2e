import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { deliver, type DeliverRequest, type DeliverResult } from '#cli/cli/commands/deliver.js';
import { parseDeadline, parseDurationMs, parseHeader } from '#cli/cli/commands/deliver-options.js';
import { EXIT } from '#cli/cli/exit.js';
import { startHookServer } from '#cli/receivers/hook/hook-server.js';
import { VirtualClock } from '#oncely/time/virtual-clock.js';
import { seededRandom } from '#oncely/time/random.js';
import { runOncely } from '../../support/run-cli.js';

const START = Date.UTC(2026, 8, 14, 12, 0, 0);

/** Runs `deliver` in-process against a real hook server, both sides on one virtual clock. */
async function run(
  script: string,
  request: Partial<DeliverRequest> = {},
): Promise<{ result: DeliverResult; out: string; err: string; arrivals: number }> {
  const clock = new VirtualClock({ startAt: START });
  const hook = await startHookServer({ script, clock });
  let out = '';
  let err = '';
  try {
    const result = await deliver(
      {
        url: `${hook.url}/hooks/run-complete`,
        data: '{"run_id":"run-9"}',
        method: 'POST',
        key: 'run-9',
        ...request,
      },
      { out: (t) => (out += t), err: (t) => (err += t), clock, random: seededRandom(7) },
    );
    return { result, out, err, arrivals: (await hook.service.counts()).arrivals };
  } finally {
    await hook.close();
  }
}

test('prints every attempt with its status, wait and why, the attempt count and the last non-2xx status', async () => {
  const { result, out, err, arrivals } = await run('429@1x3,200');
  assert.equal(result.exitCode, EXIT.ok);
  const attemptLines = out.split('\n').filter((l) => /^\s+#\d/.test(l));
  assert.equal(attemptLines.length, 4);
  assert.ok(
    attemptLines
      .slice(0, 3)
      .every((l) => / 429 {2}retry .*wait \d+ ms \(retry-after 1 s\)/.test(l)),
    out,
  );
  assert.match(attemptLines[3]!, / 200 {2}ok/);
  assert.match(out, /delivered: ok \(stop:ok\) after 4 attempts, last non-2xx status 429/);
  assert.equal(err, '');
  assert.equal(arrivals, 4);
});

test('a fatal status exits 3 after exactly one arrival and shows the refusal', async () => {
  const { result, out, err, arrivals } = await run('400', { maxAttempts: 12 });
  assert.equal(result.exitCode, EXIT.fatalStatus);
  assert.equal(arrivals, 1);
  assert.match(out, /response 400/);
  assert.match(err, /^oncely: not delivered: fatal status/);
});

test('an exhausted attempt budget exits 4', async () => {
  const { result } = await run('503', { maxAttempts: 2 });
  assert.equal(result.exitCode, EXIT.budgetExhausted);
  assert.equal(result.report.attemptCount, 2);
});

test('a deadline 1.5 s away against Retry-After: 5 exits 5 at once, without sleeping', async () => {
  const { result } = await run('429@5', { deadlineAt: START + 1500 });
  assert.equal(result.exitCode, EXIT.deadlinePassed);
  assert.equal(result.report.stopReason, 'retry_after_too_long');
  assert.equal(result.report.totalSleptMs, 0);
});

test('--json exposes the report and the final response: a swallowed ack, then the replayed receipt', async () => {
  const { result, out } = await run('swallow,200', { json: true });
  const printed = JSON.parse(out) as DeliverResult;
  assert.deepEqual(
    printed.report.attempts.map((a) => [a.outcome, a.status, a.transport]),
    [
      ['unknown', undefined, { sent: true, reason: 'socket_closed' }],
      ['ok', 200, undefined],
    ],
  );
  assert.equal(printed.response?.status, 200);
  assert.equal(printed.response?.idempotentReplayed, true);
  assert.equal(printed.response?.headers['idempotent-replayed'], 'true');
  assert.deepEqual(printed.response?.bodyJson, { received: true, completion: 1 });
  assert.equal(printed.exitCode, 0);
  assert.equal(result.delivered, true);
});

/** Runs `deliver` in-process with a fake fetch (no server), recording the keys it sent. */
async function runFake(
  answer: () => Response | Promise<Response>,
  request: Partial<DeliverRequest> = {},
) {
  const keys: (string | null)[] = [];
  const sent: Headers[] = [];
  const fetch = (async (_u: unknown, init?: RequestInit) => {
    sent.push(new Headers(init?.headers));
    keys.push(new Headers(init?.headers).get('idempotency-key'));
    return answer();
  }) as typeof globalThis.fetch;
  let out = '';
  let err = '';
  const result = await deliver(
    {
      url: 'http://hook.test/hooks/run-complete',
      data: '{"run_id":"run-9"}',
      method: 'POST',
      ...request,
    },
    {
      out: (t) => (out += t),
      err: (t) => (err += t),
      fetch,
      clock: new VirtualClock({ startAt: START }),
      random: seededRandom(7),
    },
  );
  return { result, out, err, keys, sent };
}

test('every ack lost: outcome unknown, exit 6, and no response is shown as final', async () => {
  const reset = () =>
    Promise.reject(
      Object.assign(new TypeError('fetch failed'), {
        cause: { code: 'ECONNRESET', message: 'read ECONNRESET' },
      }),
    );
  const { result, err, keys } = await runFake(reset, { key: 'run-9', maxAttempts: 3 });
  assert.equal(result.exitCode, EXIT.unknown);
  assert.equal(result.response, null);
  assert.deepEqual(keys, ['"run-9"', '"run-9"', '"run-9"'], "the draft's sf-string");
  assert.match(err, /^oncely: sent, no answer: the outcome is unknown/);
});

test('a refused connection after a 503: the 503 is not shown as the final response, and the outcome is not "not sent"', async () => {
  let calls = 0;
  const answer = () =>
    ++calls === 1
      ? new Response('busy', { status: 503 })
      : Promise.reject(
          Object.assign(new TypeError('fetch failed'), {
            cause: { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' },
          }),
        );
  const { result, out } = await runFake(answer, { key: 'run-9', maxAttempts: 2 });
  assert.equal(result.exitCode, EXIT.budgetExhausted, 'the first attempt was sent and answered');
  assert.equal(result.response, null);
  assert.match(out, /#2 .*---  retry    not sent \(connection refused\)/);
  assert.match(out, /response: none \(the last attempt: not sent \(connection refused\)\)/);
});

test('without --key the key is derived from method, URL and canonical data, so a rerun is the same intent', async () => {
  const ok = () => new Response('{}', { status: 200 });
  const a = await runFake(ok, { data: '{"a":1,"b":2}' });
  const b = await runFake(ok, { data: '{ "b": 2, "a": 1 }' });
  const c = await runFake(ok, { data: '{"a":1,"b":3}' });
  assert.match(a.result.key, /^deliver_[0-9a-f]{40}$/);
  assert.equal(b.result.key, a.result.key);
  assert.notEqual(c.result.key, a.result.key);
  assert.deepEqual(a.keys, [`"${a.result.key}"`]);
  assert.match(a.out, /derived from method, URL and data/);
});

test('--header adds request headers and may replace the JSON content type', async () => {
  const ok = () => new Response('{}', { status: 200 });
  const { sent } = await runFake(ok, {
    key: 'k',
    headers: [
      ['X-Run', '9'],
      ['Content-Type', 'application/vnd.hook+json'],
    ],
  });
  assert.equal(sent[0]?.get('x-run'), '9');
  assert.equal(sent[0]?.get('content-type'), 'application/vnd.hook+json');
  const plain = await runFake(ok, { key: 'k' });
  assert.equal(plain.sent[0]?.get('content-type'), 'application/json');
});

test('deadline, duration and header parsing', () => {
  assert.equal(parseDeadline('1500ms', 1000), 2500);
  assert.equal(parseDeadline('30s', 0), 30_000);
  assert.equal(parseDeadline('2026-09-14T12:00:00Z', 0), START);
  assert.equal(parseDeadline('2026-09-14T14:00:00+02:00', 0), START);
  assert.equal(parseDurationMs('--x', '1.5s'), 1500);
  for (const bad of ['30', 'soon', '2026-09-14', '-1s'])
    assert.throws(() => parseDeadline(bad, 0), /invalid option --deadline/, bad);
  assert.deepEqual(parseHeader('X-Run:  run-9 '), ['X-Run', 'run-9']);
  assert.throws(() => parseHeader('no colon'), /invalid option --header/);
  assert.throws(() => parseHeader('Bad Name: x'), /invalid option --header/);
});

/** `oncely deliver …` in-process, as the binary runs it. */
async function cli(
  args: readonly string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { status, stdout, stderr } = await runOncely(args);
  return { code: status, stdout, stderr };
}

test('the real binary against a closed port: "not sent", exit 8, no 408 anywhere', async () => {
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port: p } = probe.address() as { port: number };
      probe.close(() => resolve(p));
    });
  });
  const { code, stdout, stderr } = await cli([
    'deliver',
    `http://127.0.0.1:${port}/hooks/x`,
    '--data',
    '{}',
    '--max-attempts',
    '2',
    '--base-delay',
    '1ms',
  ]);
  assert.equal(code, EXIT.notSent);
  assert.equal(EXIT.notSent, 8);
  assert.match(stdout, /#1 .*---  retry    not sent \(connection refused\)/);
  assert.match(
    stdout,
    /^not sent: fail \(stop:budget_exhausted\) after 2 attempts, 2 not sent \(connection refused\)/m,
  );
  assert.match(
    stderr,
    /^oncely: not sent: no attempt reached the receiver, nothing happened; safe to retry, even without a key/,
  );
  // Word boundaries: the port or the derived key may contain the digits 408 by chance.
  assert.doesNotMatch(stdout + stderr, /\b408\b/);
});

test('the command line: exit codes, and one-line messages for bad input', async () => {
  const hook = await startHookServer({ script: '400' });
  try {
    const refused = await cli([
      'deliver',
      `${hook.url}/h`,
      '--data',
      '{"x":1}',
      '--key',
      'k',
      '-H',
      'X-Run: 9',
    ]);
    assert.equal(refused.code, EXIT.fatalStatus, refused.stderr);
    assert.match(refused.stdout, /#1 .* 400 {2}fail/);

    const badDeadline = await cli([
      'deliver',
      `${hook.url}/h`,
      '--data',
      '{}',
      '--deadline',
      'soon',
    ]);
    assert.equal(badDeadline.code, EXIT.usage);
    assert.equal(badDeadline.stderr.trim().split('\n').length, 1);
    assert.match(badDeadline.stderr, /^oncely: invalid option --deadline: got "soon"/);

    const badData = await cli(['deliver', `${hook.url}/h`, '--data', '{nope']);
    assert.equal(badData.code, EXIT.usage);
    assert.match(badData.stderr, /^oncely: invalid option --data/);
    assert.equal((await hook.service.counts()).arrivals, 1, 'bad input never reaches the wire');
  } finally {
    await hook.close();
  }
});

test('a malformed --key is refused before anything is printed or sent', async () => {
  for (const key of ['', '   ', 'caf\u00e9']) {
    const result = await runOncely([
      'deliver',
      'http://127.0.0.1:1/x',
      '--data',
      '{}',
      '--key',
      key,
    ]);
    assert.equal(result.status, EXIT.usage, `--key ${JSON.stringify(key)}`);
    assert.equal(result.stdout, '', 'nothing printed before the refusal');
    assert.match(result.stderr, /^oncely: .*idempotency key/);
  }
});

test('deliver with nothing names everything it lacks, in one line, exit 2', async () => {
  const bare = await cli(['deliver']);
  assert.equal(bare.code, EXIT.usage);
  assert.equal(bare.stdout, '');
  assert.match(
    bare.stderr,
    /^oncely: deliver is missing the <url> argument and --data <json>: npx oncely deliver <url> --data <json>/,
  );
  assert.equal(bare.stderr.trim().split('\n').length, 1);
  const noData = await cli(['deliver', 'http://127.0.0.1:1/x']);
  assert.equal(noData.code, EXIT.usage);
  assert.match(noData.stderr, /^oncely: deliver is missing --data <json>: /);
});
