import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  formatNotesStory,
  runNotesStory,
  type NotesExchange,
  type NotesStory,
} from '#cli/lab/notes/index.js';
import { runOncely } from '../../support/run-cli.js';

type Body = {
  version?: number;
  title?: string;
  code?: string;
  currentVersion?: number;
  requestId?: string;
};
const body = (e: NotesExchange | undefined): Body => (e?.response.body ?? {}) as Body;

describe('oncely lab notes (the notes story)', () => {
  let story: NotesStory;
  before(async () => {
    story = await runNotesStory();
  });

  it('tells the story: lost reply, lookup, exact retry, 422, 409, another edit, receipt vs today', () => {
    const [read, lost, lookup, retry, reused, stale, bob, last] = story.steps;
    assert.equal(story.steps.length, 8);

    assert.equal(body(read!.exchanges[0]).version, 1);

    // The reply was lost for real: the server committed version 2, the client saw a timeout.
    const sent = lost!.exchanges[0]!;
    assert.equal(sent.response.status, 200);
    assert.equal(body(sent).version, 2);
    assert.deepEqual(sent.lost, {
      clientSaw: 'the reply never arrived: the connection dropped after the server committed',
      outcome: 'unknown',
    });

    assert.equal(lookup!.lookup?.kind, 'found');
    assert.deepEqual(lookup!.lookup?.receipt?.body, sent.response.body);

    const [again, afterRetry] = retry!.exchanges;
    assert.equal(again!.response.status, 200);
    assert.equal(again!.response.replayed, true);
    assert.deepEqual(again!.response.body, sent.response.body, 'the first receipt');
    assert.equal(body(afterRetry).version, 2, 'the note reached version 2 and stays there');

    assert.equal(reused!.exchanges[0]!.response.status, 422);
    assert.equal(body(reused!.exchanges[0]).code, 'key_reused');
    assert.equal(
      body(reused!.exchanges[1]).title,
      'Agenda: budget first',
      'the other title was not applied',
    );

    const conflict = stale!.exchanges[0]!;
    assert.equal(conflict.response.status, 409);
    assert.equal(body(conflict).code, 'version_conflict');
    assert.equal(body(conflict).currentVersion, 2);
    assert.equal(conflict.response.retryAfter, null);
    assert.equal(conflict.attempts, 1, "oncely's client does not retry a version conflict");

    assert.equal(body(bob!.exchanges[1]).version, 3);

    const [replay, today] = last!.exchanges;
    assert.equal(replay!.response.replayed, true);
    assert.equal(body(replay).version, 2);
    assert.equal(body(today).version, 3);
    assert.deepEqual(story.summary, {
      receiptVersion: 2,
      currentVersion: 3,
      currentTitle: 'Agenda: budget first, then hiring',
    });
  });

  it('prints the same story on every run', async () => {
    assert.equal(formatNotesStory(await runNotesStory()), formatNotesStory(story));
  });

  it('`oncely lab notes` prints it, and --json gives the steps', async () => {
    const text = await runOncely(['lab', 'notes']);
    assert.equal(text.status, 0, text.stderr);
    assert.equal(text.stdout, formatNotesStory(story));
    for (const needle of [
      'sent by the server, never received',
      'lookup(alice, alice-edit-1) -> found',
      'Idempotent-Replayed: true',
      'problem key_reused',
      'problem version_conflict {"id":"note-1","expectedVersion":1,"currentVersion":2}',
    ]) {
      assert.ok(text.stdout.includes(needle), `missing ${needle}`);
    }
    const json = await runOncely(['lab', 'notes', '--json']);
    assert.equal(json.status, 0, json.stderr);
    assert.deepEqual(JSON.parse(json.stdout), JSON.parse(JSON.stringify(story)));
  });
});
