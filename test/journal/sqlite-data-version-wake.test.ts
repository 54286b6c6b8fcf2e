import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { VirtualClock } from '#oncely/time/index.js';
import { inProcessWake } from '#oncely/stores/journal/journal-wake.js';
import {
  nextLookMs,
  QUIET_POLL_MAX_MS,
  WAL_WRITE_BURST_MS,
  withDataVersionWake,
} from '#oncely/stores/journal/sqlite/data-version-wake.js';
import type { WalSignal } from '#oncely/stores/journal/sqlite/wal-watch.js';

/**
 * A connection whose data_version the test sets, and a WAL file whose watch the test fires: the
 * looks are counted, and time moves only on the virtual clock.
 */
function rig({ watchable = true } = {}) {
  const clock = new VirtualClock({ startAt: 1_000_000, autoAdvance: false });
  const state = {
    version: 1,
    looks: 0,
    wal: 'j.db-wal' as string | null | undefined,
    touched: [] as string[],
    watching: 0,
    write: undefined as (() => void) | undefined,
    gone: undefined as (() => void) | undefined,
  };
  const signal: WalSignal = {
    watch(path, onWrite, onGone) {
      if (!watchable) return undefined;
      assert.equal(path, 'j.db-wal');
      state.watching += 1;
      state.write = onWrite;
      state.gone = onGone;
      return () => (state.watching -= 1);
    },
    touch: (path) => void state.touched.push(path),
  };
  const source = {
    dataVersion() {
      state.looks += 1;
      return state.version;
    },
    walFile: () => state.wal,
  };
  const wake = withDataVersionWake(inProcessWake(), source, clock, signal);
  return { clock, state, wake };
}

/** Watches `wake`, counting the calls. */
async function counted(wake: ReturnType<typeof rig>['wake']) {
  const heard = { count: 0, stop: () => {} };
  heard.stop = await wake.watch(() => (heard.count += 1));
  return heard;
}

describe('SQLite journal wake: data_version looks and the WAL watch', () => {
  it('the pause between looks: 1 ms near a write, then a 50th of the quiet time, capped', () => {
    assert.equal(nextLookMs(false, 60_000), 1, 'no watch: always 1 ms');
    assert.equal(nextLookMs(true, 0), 1);
    assert.equal(nextLookMs(true, WAL_WRITE_BURST_MS - 1), 1);
    assert.equal(nextLookMs(true, 1000), 20);
    assert.equal(nextLookMs(true, 3_600_000), QUIET_POLL_MAX_MS);
  });

  it('a watched, quiet file is looked at rarely; without a watch, every millisecond', async () => {
    for (const watchable of [true, false]) {
      const { clock, state, wake } = rig({ watchable });
      const heard = await counted(wake);
      await clock.advance(10_000);
      if (watchable) assert.ok(state.looks < 400, `watched: ${state.looks} looks in 10 s`);
      else assert.ok(state.looks >= 9_000, `unwatched: ${state.looks} looks in 10 s`);
      heard.stop();
      assert.equal(state.watching, 0, 'the watch ends with the last watcher');
      await wake.close();
    }
  });

  it('a write to the WAL brings the looks back to 1 ms; a commit seen there wakes', async () => {
    const { clock, state, wake } = rig();
    const heard = await counted(wake);
    await clock.advance(60_000); // quiet: the pause is at its longest
    assert.equal(state.watching, 1);
    state.write!(); // a commit's write, before its fsync: not visible yet
    assert.equal(heard.count, 0);
    const looks = state.looks;
    await clock.advance(5);
    assert.ok(state.looks - looks >= 5, 'looked every millisecond after the write');
    state.version = 2; // the commit is visible now
    await clock.advance(1);
    assert.equal(heard.count, 1, 'woken within a millisecond of the commit');
    heard.stop();
    await wake.close();
  });

  it("a touch from another process's record is looked at at once, no time passing", async () => {
    const { clock, state, wake } = rig();
    const heard = await counted(wake);
    await clock.advance(60_000);
    const before = clock.now();
    state.version = 2;
    state.write!(); // the recorder touched the WAL after its commit
    assert.equal(heard.count, 1);
    assert.equal(clock.now(), before);
    heard.stop();
    await wake.close();
  });

  it('a store that recorded touches its WAL file; a file gone is watched again', async () => {
    const { clock, state, wake } = rig();
    await wake.written('record');
    assert.deepEqual(state.touched, ['j.db-wal']);
    const heard = await counted(wake);
    assert.equal(state.watching, 1);
    state.gone!(); // removed or replaced: the watch is over
    state.watching -= 1;
    await clock.advance(QUIET_POLL_MAX_MS);
    assert.equal(state.watching, 1, 'watched again at the next look');
    heard.stop();
    await wake.close();
  });

  it('a database in memory: no other process can commit to it, nothing is looked at', async () => {
    const { clock, state, wake } = rig();
    state.wal = null;
    const heard = await counted(wake);
    const looks = state.looks;
    await clock.advance(1000);
    assert.equal(state.looks, looks);
    assert.equal(state.watching, 0);
    heard.stop();
    await wake.close();
  });
});

describe('in-process wake with a channel known late', () => {
  it('stores on one channel hear each other once their channel is known', async () => {
    const channel: { known?: string } = {};
    const worker = inProcessWake(() => channel.known);
    const app = inProcessWake(() => channel.known);
    let heard = 0;
    const stop = await worker.watch(() => (heard += 1));
    await app.written('record');
    assert.equal(heard, 0, 'unknown channel: a store hears its own writes only');
    await worker.written('record');
    assert.equal(heard, 1);
    channel.known = 'sqlite:/j.db:t';
    worker.ensure(); // the worker's poll, once its connection is open
    await app.written('record');
    assert.equal(heard, 2, 'the app store wakes the worker store');
    stop();
    await app.written('record');
    assert.equal(heard, 2, 'nothing after stop');
  });
});
