// How deferred commits are grouped into transactions, with a scripted commit: what goes together,
// what waits, what goes alone, and whose answer each request gets. The real server's side is in
// test/http/deferred-writes.test.ts and test/ledger/deferred-race-property.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isInvalidOptionError } from '#oncely/contract/errors.js';
import type { CompletedEntry } from '#oncely/ledger/ledger-entry.js';
import {
  deferredGroups,
  type DeferredGroupOptions,
} from '#oncely/stores/ledger/postgres/postgres-deferred-groups.js';
import type {
  DeferredCommitOutcome,
  DeferredMember,
} from '#oncely/stores/ledger/postgres/postgres-deferred.js';

function member(key: string): DeferredMember {
  const entry: CompletedEntry = {
    scope: 's',
    key,
    fingerprint: 'ab'.repeat(32),
    state: 'completed',
    token: `t-${key}`,
    firstSeenAt: 1,
    completedAt: 2,
    expiresAt: 3,
    receipt: { status: 201, headers: [], body: new Uint8Array() },
  };
  return { entry, writes: [{ sql: 'INSERT INTO t VALUES ($1)', params: [key] }] };
}

/**
 * What a scripted transaction answers: committed; 'lost' (a lone member's key had a row); the
 * places of the members whose key had one; or a failure.
 */
type Answer = 'committed' | 'lost' | { readonly found: number[] } | Error;

function outcomeOf(answer: Exclude<Answer, Error>): DeferredCommitOutcome {
  if (answer === 'committed') return { committed: true };
  return { committed: false, found: answer === 'lost' ? [0] : answer.found };
}

/** A transaction the scripted commit was asked for, answered when the test says so. */
interface Sent {
  readonly keys: string[];
  answer(answer: Answer): void;
}

/** Groups over a commit that records each transaction and waits for the test to answer it. */
function scripted(options?: DeferredGroupOptions) {
  const sent: Sent[] = [];
  const groups = deferredGroups(
    (members) =>
      new Promise<DeferredCommitOutcome>((resolve, reject) => {
        sent.push({
          keys: members.map((m) => m.entry.key),
          answer: (answer) =>
            answer instanceof Error ? reject(answer) : resolve(outcomeOf(answer)),
        });
      }),
    options,
  );
  const answers = new Map<string, boolean | string>();
  const commit = (key: string) =>
    groups.commit(member(key)).then(
      (committed) => void answers.set(key, committed),
      (error: Error) => void answers.set(key, `rejected: ${error.message}`),
    );
  return { sent, answers, commit };
}

/** Lets the groups start (after this turn's I/O, setImmediate) and answers settle. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('deferred commits grouped into transactions', () => {
  it('a lone commit goes alone, in the next turn, and answers what its transaction did', async () => {
    const { sent, answers, commit } = scripted();
    const done = commit('a');
    assert.equal(sent.length, 0, 'not before the I/O callbacks of this turn');
    await turn();
    assert.deepEqual(
      sent.map((s) => s.keys),
      [['a']],
    );
    sent[0]!.answer('committed');
    await done;
    assert.equal(answers.get('a'), true);
  });

  it('commits made while every slot is busy wait, then go together as one transaction', async () => {
    const { sent, answers, commit } = scripted({ inFlight: 1 });
    const first = commit('a');
    await turn();
    const rest = ['b', 'c', 'd'].map(commit);
    await turn();
    assert.equal(sent.length, 1, 'b, c and d wait for the transaction on its way');
    sent[0]!.answer('committed');
    await first;
    await turn();
    assert.deepEqual(
      sent.map((s) => s.keys),
      [['a'], ['b', 'c', 'd']],
    );
    sent[1]!.answer('committed');
    await Promise.all(rest);
    assert.deepEqual([...answers.values()], [true, true, true, true]);
  });

  it('commits that arrive in one turn share a transaction, at most maxRequests in one, inFlight at once', async () => {
    const { sent, commit } = scripted({ maxRequests: 2, inFlight: 2 });
    const all = ['a', 'b', 'c', 'd', 'e'].map(commit);
    await turn();
    assert.deepEqual(
      sent.map((s) => s.keys),
      [
        ['a', 'b'],
        ['c', 'd'],
      ],
    );
    sent[0]!.answer('committed');
    await turn();
    assert.deepEqual(sent[2]!.keys, ['e']);
    sent[1]!.answer('committed');
    sent[2]!.answer('committed');
    await Promise.all(all);
  });

  it('maxRequests 1 commits every request alone', async () => {
    const { sent, commit } = scripted({ maxRequests: 1, inFlight: 3 });
    const all = ['a', 'b', 'c'].map(commit);
    await turn();
    assert.deepEqual(
      sent.map((s) => s.keys),
      [['a'], ['b'], ['c']],
    );
    for (const s of sent) s.answer('committed');
    await Promise.all(all);
  });

  it('a group with keys that had a row commits nothing: those lose, the others go again together', async () => {
    const { sent, answers, commit } = scripted({ inFlight: 1 });
    const all = ['a', 'b', 'c', 'd'].map(commit);
    await turn();
    sent[0]!.answer({ found: [1, 3] });
    await turn();
    assert.deepEqual(sent[1]!.keys, ['a', 'c'], 'b and d are not sent again');
    sent[1]!.answer('committed');
    await Promise.all(all);
    assert.deepEqual(Object.fromEntries(answers), { a: true, b: false, c: true, d: false });
    assert.equal(sent.length, 2);
  });

  it('a group whose second try finds a row too narrows again, down to one member alone', async () => {
    const { sent, answers, commit } = scripted({ inFlight: 1 });
    const all = ['a', 'b', 'c'].map(commit);
    await turn();
    sent[0]!.answer({ found: [0] });
    await turn();
    sent[1]!.answer({ found: [0] });
    await turn();
    assert.deepEqual(
      sent.map((s) => s.keys),
      [['a', 'b', 'c'], ['b', 'c'], ['c']],
    );
    sent[2]!.answer('committed');
    await Promise.all(all);
    assert.deepEqual(Object.fromEntries(answers), { a: false, b: false, c: true });
  });

  it("a group that fails (a write, the connection) fails nobody: alone, only the culprit's commit rejects", async () => {
    const { sent, answers, commit } = scripted({ inFlight: 1 });
    const all = ['a', 'b'].map(commit);
    await turn();
    sent[0]!.answer(new Error('a write of b failed'));
    await turn();
    sent[1]!.answer('committed');
    sent[2]!.answer(new Error('a write of b failed'));
    await Promise.all(all);
    assert.deepEqual(Object.fromEntries(answers), {
      a: true,
      b: 'rejected: a write of b failed',
    });
  });

  it('two commits of one key never go together nor at once: the second waits, then goes alone', async () => {
    const { sent, commit } = scripted({ inFlight: 2 });
    const first = [commit('k'), commit('k'), commit('x')];
    await turn();
    assert.deepEqual(
      sent.map((s) => s.keys),
      [['k', 'x']],
      'the second k is held back, though a slot is free',
    );
    const later = commit('y');
    await turn();
    assert.deepEqual(sent[1]!.keys, ['y'], 'the held one does not block others');
    sent[0]!.answer('committed');
    await turn();
    assert.deepEqual(sent[2]!.keys, ['k'], 'alone: it will find the first one row');
    sent[1]!.answer('committed');
    sent[2]!.answer('lost');
    await Promise.all([...first, later]);
  });

  it('bad options are refused, naming the option', () => {
    for (const options of [{ maxRequests: 0 }, { maxRequests: 1.5 }, { inFlight: 0 }]) {
      assert.throws(
        () => deferredGroups(async () => ({ committed: true }), options),
        (error: unknown) =>
          isInvalidOptionError(error) &&
          /deferredGroups\.(maxRequests|inFlight)/.test(error.message),
      );
    }
  });
});
