// examples/express-prisma as its README runs it: `prisma generate` offline (a placeholder schema
// engine), the app compiled with its own tsconfig, started, and driven with curl, on SQLite and on
// PostgreSQL (a database of its own). Then the database itself: the order, the webhook it owes and
// the receipt, each written once. The README's block runs in a copy of the app inside the
// repository (so it finds the packages), one per database, so the two runs never share a file.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { freePort } from '../support/free-port.js';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { parseBlocks } from '../support/doc-blocks.js';
import { REPO_ROOT, repoPath } from '../support/repo-path.js';
import { describePostgres, uniqueSchemaName } from '../stores/postgres-env.js';

const README = 'examples/express-prisma/README.md';
const blocks = parseBlocks(REPO_ROOT, README).filter((b) => b.marker.kind === 'run');

/** The README's block in a fresh copy of the app; resolves with its folder once it exited 0. */
async function runReadme(name: string, env: NodeJS.ProcessEnv): Promise<string> {
  assert.equal(blocks.length, 1, `${README} has one block the suite runs`);
  const dir = repoPath('dist', 'test', '.express-prisma', `${process.pid}-${name}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const file of ['app.ts', 'tsconfig.json', 'prisma'])
    cpSync(repoPath('examples', 'express-prisma', file), join(dir, file), { recursive: true });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const port = String(await freePort());
  const { code, output } = await new Promise<{ code: number | null; output: string }>(
    (resolve, reject) => {
      const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', blocks[0]!.body], {
        cwd: dir,
        env: { ...process.env, PORT: port, ...env },
        timeout: 120_000,
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, output }));
    },
  );
  assert.equal(code, 0, `${README} failed (exit ${code}):\n${output}`);
  return dir;
}

/** What one order left in the database: its rows, its intents, its receipts. */
const COUNTS = `SELECT
  (SELECT count(*) FROM orders WHERE key = 'order-1') AS orders,
  (SELECT count(*) FROM oncely_intents WHERE key = 'order-placed-order-1') AS intents,
  (SELECT count(*) FROM oncely_ledger WHERE key = 'order-1' AND state = 'completed') AS receipts`;
const ONE_EACH = { orders: 1, intents: 1, receipts: 1 };

describe('examples/express-prisma: its README, run', () => {
  it('on SQLite: the order, its webhook and its receipt, once each', async () => {
    const dir = await runReadme('sqlite', { PROVIDER: 'sqlite' });
    const db = new Database(join(dir, 'shop.db'), { readonly: true });
    try {
      const counts = db.prepare(COUNTS).get() as Record<string, number>;
      assert.deepEqual({ ...counts }, ONE_EACH);
    } finally {
      db.close();
    }
  });
});

await describePostgres('examples/express-prisma', ({ url, options }) => {
  it('on PostgreSQL: the order, its webhook and its receipt, once each', options, async () => {
    // A database of its own: the app works in its default schema, as an app would.
    const database = uniqueSchemaName('oncely_example_prisma');
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${database}"`);
    const own = new URL(url);
    own.pathname = `/${database}`;
    const client = new pg.Client({ connectionString: own.href });
    try {
      await runReadme('postgresql', { PROVIDER: 'postgresql', DATABASE_URL: own.href });
      await client.connect();
      const row = (await client.query(COUNTS)).rows[0] as Record<string, string>;
      assert.deepEqual(
        Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v)])),
        ONE_EACH,
      );
    } finally {
      await client.end().catch(() => undefined);
      await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
      await admin.end();
    }
  });
});
