// bench/anchors: its command line, and the dedupe check it makes before timing anything. No
// timing here (speed lives in bench/), and no Redis: the rows checked run on memory and SQLite.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkDedupe } from '../../bench/anchors-check.js';
import { AnchorsServer } from '../../bench/anchors-child.js';
import { redisDurability } from '../../bench/anchors-redis.js';
import { compare, formatAnchors, type AnchorsRow } from '../../bench/anchors-report.js';
import {
  anchorsRows,
  parseTableList,
  parseVariantList,
  rowDurability,
  VARIANT_IDS,
  variantOf,
  type AnchorsRowId,
} from '../../bench/anchors-variants.js';
import { repoPath } from '../support/repo-path.js';

const bench = repoPath('dist', 'bench', 'anchors.js');
const run = (...args: string[]) =>
  spawnSync(process.execPath, [bench, ...args], { encoding: 'utf8', timeout: 20_000 });

/** The bench refused its arguments: one line on stderr matching `line`, nothing on stdout, exit 1. */
function assertRefused(args: string[], line: RegExp): void {
  const result = run(...args);
  assert.equal(result.status, 1);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, line);
  assert.equal(result.stderr.trim().split('\n').length, 1);
}

describe('bench/anchors command line', () => {
  it('--help names every variant and the flags, and exits 0', () => {
    const result = run('--help');
    assert.equal(result.status, 0, result.stderr);
    for (const id of VARIANT_IDS) assert.match(result.stdout, new RegExp(id));
    for (const flag of [
      '--seconds',
      '--rounds',
      '--connections',
      '--pg',
      '--redis',
      '--durability',
      '--keys',
    ])
      assert.match(result.stdout, new RegExp(flag));
  });

  it('refuses an unknown key shape in one line and exits 1', () => {
    const result = run('--keys', 'guid');
    assert.equal(result.status, 1);
    assert.match(result.stderr, /--keys takes sequential or uuid; got "guid"/);
    assert.equal(result.stderr.trim().split('\n').length, 1);
  });

  it('refuses an unknown variant in one line, naming the known ones, and exits 1', () => {
    assertRefused(
      ['--variants', 'oncely-mysql'],
      /^bench\/anchors: --variants: "oncely-mysql" is unknown; known: none, /,
    );
  });

  it('refuses an unknown durability in one line and exits 1', () => {
    assertRefused(
      ['--durability', 'durable,power'],
      /^bench\/anchors: --durability takes durable, process; got "durable,power"/,
    );
  });

  it('reads the tables in their own order, and gives PostgreSQL rows to the durable table only', () => {
    assert.deepEqual(parseTableList('process,durable'), ['durable', 'process']);
    assert.deepEqual(parseTableList('process'), ['process']);
    assert.throws(() => parseTableList(','), /--durability takes/);
    assert.deepEqual(
      anchorsRows(['none', 'oncely-postgres', 'oncely-sqlite'], ['durable', 'process']),
      [
        { variant: 'none', table: 'durable' },
        { variant: 'oncely-postgres', table: 'durable' },
        { variant: 'oncely-sqlite', table: 'durable' },
        { variant: 'none', table: 'process' },
        { variant: 'oncely-sqlite', table: 'process' },
      ],
    );
  });

  it('reads variants by unique prefix and refuses an ambiguous one', () => {
    assert.deepEqual(parseVariantList('express,oncely-sqlite,powertools'), [
      'express-idempotency',
      'oncely-sqlite',
      'powertools-redis',
    ]);
    assert.throws(() => parseVariantList('node-idempotency'), /ambiguous/);
  });
});

describe('bench/anchors durability and verdicts', () => {
  it("gives each row the weaker of its keys' durability and its table's", () => {
    assert.equal(rowDurability('effect', 'process'), 'process');
    assert.equal(rowDurability('effect', 'durable'), 'durable');
    assert.equal(rowDurability('durable', 'process'), 'process', 'Redis fsyncing every write');
    assert.equal(rowDurability('memory', 'durable'), 'memory');
  });

  it('reads what Redis keeps from its own settings', () => {
    const of = (appendonly: string, appendfsync: string, save: string) =>
      redisDurability({ appendonly, appendfsync, save }).durability;
    assert.equal(of('yes', 'always', ''), 'durable');
    assert.equal(of('yes', 'everysec', ''), 'process');
    assert.equal(of('no', 'everysec', '3600 1'), 'memory');
    assert.equal(of('no', 'everysec', ''), 'memory');
  });

  it('calls oncely ahead only when faster on both modes at equal or stronger durability', () => {
    const row = (id: 'oncely-sqlite' | 'powertools-redis', fresh: number, replay: number) =>
      ({
        variant: variantOf(id),
        durability: id === 'oncely-sqlite' ? 'durable' : 'process',
        fresh: { requestsPerSecond: fresh },
        replay: { requestsPerSecond: replay },
      }) as unknown as AnchorsRow;
    const ahead = compare(row('oncely-sqlite', 300, 900), row('powertools-redis', 200, 600));
    assert.equal(ahead.ahead, true);
    assert.equal(ahead.durability, 'stronger');
    assert.equal(ahead.newRatio, 1.5);
    const behindOnReplays = compare(
      row('oncely-sqlite', 300, 500),
      row('powertools-redis', 200, 600),
    );
    assert.equal(behindOnReplays.ahead, false);
  });
});

describe('bench/anchors printout', () => {
  it('prints one table per durability, each oncely row divided by the floor of its own table', () => {
    const row = (
      id: 'none' | 'oncely-sqlite',
      table: 'durable' | 'process',
      fresh: number,
      cpu: number,
    ): AnchorsRow =>
      ({
        variant: variantOf(id),
        table,
        durability: table,
        fresh: {
          mode: 'new',
          requestsPerSecond: fresh,
          p99Ms: 1,
          cpuMicrosPerRequest: cpu,
          statuses: {},
          errors: 0,
          effectRows: 0,
        },
      }) as unknown as AnchorsRow;
    const text = formatAnchors([
      row('none', 'durable', 400, 100),
      row('oncely-sqlite', 'durable', 800, 100),
      row('none', 'process', 2000, 300),
      row('oncely-sqlite', 'process', 1000, 600),
    ]);
    const [durable, process] = text.split(/^process table: /m);
    assert.match(durable!, /^durable table: every effect at synchronous = FULL/);
    assert.match(durable!, /÷ no guard \(floor, durable\): req\/s new keys 2\.00×/);
    assert.match(process!, /^every effect at synchronous = NORMAL, oncely at durability 'process'/);
    assert.match(
      process!,
      /÷ no guard \(floor, process\): req\/s new keys 0\.50×.*server CPU per response new keys 2\.00×/,
    );
  });
});

describe('bench/anchors reference rows', () => {
  it('reads replays by Express alone, which is neither checked nor compared as a middleware', () => {
    const run = (mode: 'new' | 'replay', requestsPerSecond: number, cpu: number) => ({
      mode,
      requestsPerSecond,
      p99Ms: 1,
      cpuMicrosPerRequest: cpu,
      statuses: {},
      errors: 0,
      effectRows: 0,
    });
    const row = (id: 'bare-express' | 'oncely-sqlite', replay: number, cpu: number): AnchorsRow =>
      ({
        variant: variantOf(id),
        table: 'process',
        durability: 'process',
        fresh: run('new', 1000, 300),
        replay: run('replay', replay, cpu),
      }) as unknown as AnchorsRow;
    const text = formatAnchors([row('bare-express', 4000, 250), row('oncely-sqlite', 5000, 200)]);
    assert.match(text, /Express alone \(no effect\) .* n\/a \(no guard, no effect/);
    assert.match(
      text,
      /÷ Express alone \(no effect\): replays req\/s 1\.25×, server CPU per response 0\.80×/,
    );
    assert.doesNotMatch(text, /NOT ahead|ahead of every/, 'not a middleware to be ahead of');
  });
});

describe('bench/anchors dedupe check', () => {
  it('passes a route that answers a key once, and fails one that runs the effect again, in both tables', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'oncely-anchors-test-'));
    const rows: AnchorsRowId[] = anchorsRows(['none', 'oncely-sqlite'], ['durable', 'process']);
    const server = new AnchorsServer({ dir, rows });
    try {
      const { url, skipped } = await server.ready;
      assert.deepEqual(skipped, []);
      for (const table of ['durable', 'process'] as const) {
        const oncely = { variant: 'oncely-sqlite', table } as const;
        const guarded = await checkDedupe(
          `${url}/${table}/oncely-sqlite`,
          () => server.rows(oncely),
          `test-oncely-${table}`,
        );
        assert.equal(guarded.ok, true, table);
        assert.equal(guarded.effects, 1);
        assert.equal(guarded.sameAnswer, true);
        assert.deepEqual(guarded.statuses, [201, 201]);
        assert.equal(guarded.concurrent.effects, 1);

        // The floor has no guard: the check must see the second effect and the new answer.
        const none = { variant: 'none', table } as const;
        const floor = await checkDedupe(
          `${url}/${table}/none`,
          () => server.rows(none),
          `test-none-${table}`,
        );
        assert.equal(floor.ok, false, table);
        assert.equal(floor.effects, 2);
        assert.equal(floor.sameAnswer, false);
        assert.equal(floor.concurrent.effects, floor.concurrent.requests);
      }
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
