// bench/orm: its command line, and one short run on SQLite through Kysely, whose every route
// answers 2xx. No timing is asserted (speed lives in bench/).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { repoPath } from '../support/repo-path.js';

const bench = repoPath('dist', 'bench', 'orm.js');
const run = (...args: string[]) =>
  spawnSync(process.execPath, [bench, ...args], { encoding: 'utf8', timeout: 120_000 });

describe('bench/orm', () => {
  it('--help names the ORMs and the databases, and exits 0', () => {
    const result = run('--help');
    assert.equal(result.status, 0, result.stderr);
    for (const word of ['kysely', 'knex', 'drizzle', 'prisma', 'postgres', 'sqlite'])
      assert.match(result.stdout, new RegExp(word));
  });

  it('refuses an unknown ORM with one line and exit 2, before anything runs', () => {
    const result = run('--orms', 'sequelize');
    assert.equal(result.status, 2);
    assert.equal(result.stdout, '');
    assert.match(
      result.stderr,
      /^bench\/orm: --orms takes names from kysely, .*got sequelize \(--help lists the options\)\n$/,
    );
  });

  it('a short run prints a line per route with its ratios, and every route answered 2xx', () => {
    const result = run('--orms', 'kysely', '--dbs', 'sqlite', '--seconds', '1', '--rounds', '1');
    assert.equal(result.status, 0, result.stderr);
    const lines = result.stdout.split('\n');
    const at = lines.findIndex((line) => line.startsWith('kysely sqlite'));
    assert.ok(at >= 0, result.stdout);
    assert.match(lines[at]!, /\(failed: 0\)$/, 'no failed request');
    const ratioCount = (route: string) => {
      const line = lines.slice(at + 1, at + 6).find((l) => l.trim().startsWith(`${route} `));
      assert.ok(line, `${route}: ${result.stdout}`);
      return line.match(/\d+\.\d\d× \(\d+\.\d\d–\d+\.\d\d\)/g)?.length ?? 0;
    };
    // ×bare and ×bare per CPU; the guarded routes also ×tx and ×sql.
    assert.deepEqual(['bare', 'tx', 'claimed', 'deferred', 'sql'].map(ratioCount), [0, 2, 4, 4, 2]);
  });
});
