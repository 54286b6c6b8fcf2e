import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AsyncMutex } from '#oncely/stores/async-mutex.js';
import { createMemoryStore } from '#oncely/stores/memory/index.js';

describe('memory store specifics', () => {
  it('stages transaction writes: invisible outside until commit, dropped on rollback', async () => {
    const store = createMemoryStore();
    await store.transaction(async (tx) => {
      tx.set('notes', 'n1', { v: 1 });
      assert.deepEqual(tx.get('notes', 'n1'), { v: 1 }, 'a transaction sees its own writes');
      assert.equal(store.read('notes', 'n1'), undefined, 'nobody else does yet');
    });
    assert.deepEqual(store.read('notes', 'n1'), { v: 1 });
    await assert.rejects(
      store.transaction(async (tx) => {
        tx.set('notes', 'n1', { v: 2 });
        assert.equal(tx.delete('notes', 'n1'), true);
        assert.deepEqual(tx.entries('notes'), []);
        throw new Error('roll back');
      }),
    );
    assert.deepEqual(store.entries('notes'), [['n1', { v: 1 }]]);
  });

  it('stores clones: a caller mutating its object changes nothing stored', async () => {
    const store = createMemoryStore();
    const value = { v: 1 };
    await store.transaction(async (tx) => tx.set('t', 'a', value));
    value.v = 99;
    const read = store.read<{ v: number }>('t', 'a')!;
    read.v = 42;
    assert.deepEqual(store.read('t', 'a'), { v: 1 });
  });
});

describe('AsyncMutex', () => {
  it('runs sections one at a time in arrival order, and survives a section that throws', async () => {
    const mutex = new AsyncMutex();
    const log: string[] = [];
    const section = (name: string, fail = false) =>
      mutex.run(async () => {
        log.push(`${name}>`);
        await new Promise<void>((resolve) => setImmediate(resolve));
        log.push(`<${name}`);
        if (fail) throw new Error(name);
        return name;
      });
    const results = await Promise.allSettled([section('a'), section('b', true), section('c')]);
    assert.deepEqual(log, ['a>', '<a', 'b>', '<b', 'c>', '<c']);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.equal(mutex.pending, 0);
  });
});
