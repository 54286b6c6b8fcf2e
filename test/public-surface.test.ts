import { test } from 'node:test';
import assert from 'node:assert/strict';

// Imports go through the package's own "exports" map, as a user's would.
test('the root export offers the client, the policy, the contract and the ledger', async () => {
  const root = await import('oncely');
  for (const name of ['retry', 'createClient', 'RetryError', 'decide', 'RetryTokenBucket', 'validateKey', 'fingerprint', 'parseRetryAfter', 'createLedger', 'VirtualClock', 'seededRandom']) {
    assert.equal(typeof (root as Record<string, unknown>)[name], 'function', `${name} is exported`);
  }
});

test('each store, the HTTP layer and the simulator have a subpath of their own', async () => {
  const subpaths = {
    'oncely/http': 'createIdempotencyMiddleware',
    'oncely/stores/memory': 'createMemoryStore',
    'oncely/stores/sqlite': 'createSqliteStore',
    'oncely/stores/postgres': 'createPostgresStore',
    'oncely/sim': 'runWorld',
  };
  const more = { 'oncely/stores/sqlite': ['sqliteSql', 'openSqliteDatabase'], 'oncely/stores/postgres': ['postgresSql', 'openPostgresPool'] };
  for (const [path, names] of Object.entries(more)) {
    const mod = (await import(path)) as Record<string, unknown>;
    for (const name of names) assert.equal(typeof mod[name], 'function', `${path} exports ${name}`);
  }
  for (const [path, name] of Object.entries(subpaths)) {
    const mod = (await import(path)) as Record<string, unknown>;
    assert.equal(typeof mod[name], 'function', `${path} exports ${name}`);
  }
});
